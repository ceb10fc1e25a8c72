//! Simulated time: picoseconds in a `u64` (about 213 days of range).
//!
//! smoltcp keeps time in whole microseconds; [`Time::to_smoltcp`] is the one
//! place engine time is converted for it. It floors, so the stack may see a
//! time up to 999 999 ps earlier than the engine's: its timers (delayed ACK,
//! retransmission) fire at most 1 µs late. Poll deadlines coming back from
//! smoltcp are exact microseconds and convert without loss.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per unit.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: u64 = 1_000_000_000;
/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the run started.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Time {
    /// The start of every run.
    pub const ZERO: Time = Time(0);

    /// Picoseconds since the start.
    pub fn ps(self) -> u64 {
        self.0
    }

    /// Seconds since the start (for reports only; never for ordering).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }

    /// The smoltcp instant for this time, floored to whole microseconds.
    pub fn to_smoltcp(self) -> smoltcp::time::Instant {
        smoltcp::time::Instant::from_micros((self.0 / PS_PER_US) as i64)
    }

    /// The engine time of a smoltcp instant (exact; negative clamps to zero).
    pub fn from_smoltcp(instant: smoltcp::time::Instant) -> Time {
        Time(instant.total_micros().max(0) as u64 * PS_PER_US)
    }

    /// Time elapsed since `earlier` (saturating at zero).
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// No time at all.
    pub const ZERO: Dur = Dur(0);

    /// Picoseconds in this span.
    pub fn ps(self) -> u64 {
        self.0
    }

    /// A span of whole microseconds.
    pub fn from_micros(us: u64) -> Dur {
        Dur(us * PS_PER_US)
    }

    /// Seconds (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }

    /// The smoltcp duration, floored to whole microseconds.
    pub fn to_smoltcp(self) -> smoltcp::time::Duration {
        smoltcp::time::Duration::from_micros(self.0 / PS_PER_US)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.checked_add(d.0).expect("simulated time overflowed u64 picoseconds"))
    }
}

impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        *self = *self + d;
    }
}

impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0 + d.0)
    }
}

impl Sub for Time {
    type Output = Dur;
    fn sub(self, earlier: Time) -> Dur {
        Dur(self.0.checked_sub(earlier.0).expect("time went backwards"))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6} us", self.0 as f64 / PS_PER_US as f64)
    }
}

/// `a × b / d` rounded down, exactly: in 64 bits when the product fits
/// (the common case, and several times faster), else in 128 bits.
#[inline]
pub fn mul_div_floor(a: u64, b: u64, d: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p / d,
        None => (u128::from(a) * u128::from(b) / u128::from(d)) as u64,
    }
}

/// `a × b / d` rounded up, exactly (see [`mul_div_floor`]).
#[inline]
pub fn mul_div_ceil(a: u64, b: u64, d: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p.div_ceil(d),
        None => (u128::from(a) * u128::from(b)).div_ceil(u128::from(d)) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoltcp_conversion_floors_to_microseconds() {
        assert_eq!(Time(1_999_999).to_smoltcp().total_micros(), 1);
        assert_eq!(Time(2_000_000).to_smoltcp().total_micros(), 2);
        let back = Time::from_smoltcp(smoltcp::time::Instant::from_micros(7));
        assert_eq!(back, Time(7 * PS_PER_US));
    }

    #[test]
    fn negative_smoltcp_instant_clamps_to_zero() {
        assert_eq!(Time::from_smoltcp(smoltcp::time::Instant::from_micros(-5)), Time::ZERO);
    }

    #[test]
    fn arithmetic() {
        let t = Time(10) + Dur(5);
        assert_eq!(t, Time(15));
        assert_eq!(t - Time(3), Dur(12));
        assert_eq!(Time(3).since(t), Dur::ZERO);
    }

    #[test]
    fn mul_div_is_exact_on_both_paths() {
        // Fits in 64 bits.
        assert_eq!(mul_div_ceil(1000, PS_PER_S, 3_000_000_000), 333_334);
        assert_eq!(mul_div_floor(1000, PS_PER_S, 3_000_000_000), 333_333);
        // Overflows 64 bits: the 128-bit path gives the exact answer.
        let (a, b, d) = (u64::MAX / 3, 7u64, 5u64);
        let exact = u128::from(a) * u128::from(b);
        assert_eq!(u128::from(mul_div_floor(a, b, d)), exact / 5);
        assert_eq!(u128::from(mul_div_ceil(a, b, d)), exact.div_ceil(5));
    }
}
