//! Where a timed host's reads found the data they copied, with DDIO
//! (`memory.ddio`): still in the last-level cache, or evicted to memory by
//! newer DMA writes; and how much received data the stack had taken from
//! the ring and no read had copied yet, on average, whose time in the
//! socket follows by Little's law (the Cai study's socket-buffer
//! experiment measures both: its LLC miss rate, and the time from a
//! frame's GRO, in the NAPI poll that takes it, to its copy).

use serde::Serialize;

use crate::engine::Time;

/// What the reads of received data found (`memory.ddio` set), over the
/// measured interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RxCopyStats {
    /// Payload bytes copied while still in the last-level cache.
    pub llc_bytes: u64,
    /// Payload bytes copied from memory (newer DMA writes had evicted them).
    pub memory_bytes: u64,
    /// Time-mean payload bytes the driver had taken from the receive ring
    /// (its NAPI poll) and no read had copied yet.
    pub mean_unread_bytes: f64,
    /// Payload bytes reads copied.
    pub read_bytes: u64,
    /// Mean time a byte waited from its NAPI poll to its read, s (Little's
    /// law: the mean unread bytes over the bytes read per second; 0 if
    /// nothing was read).
    pub mean_wait_s: f64,
}

/// The counters behind [`RxCopyStats`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RxCopy {
    llc_bytes: u64,
    memory_bytes: u64,
    /// Payload bytes the driver took from the ring, and reads copied.
    taken: u64,
    read: u64,
    /// `read` when the measured interval began.
    read_before: u64,
    /// Start of the measured interval.
    from: Time,
    /// When `area` was last brought up to date.
    since: Time,
    /// Integral of the unread bytes over time since `from` (byte-picoseconds).
    area: u128,
}

impl RxCopy {
    /// The measured interval begins at `now` (what waits goes on waiting).
    pub(crate) fn restart(&mut self, now: Time) {
        *self = RxCopy {
            from: now,
            since: now,
            taken: self.taken,
            read: self.read,
            read_before: self.read,
            ..RxCopy::default()
        };
    }

    fn unread(&self) -> u64 {
        self.taken.saturating_sub(self.read)
    }

    /// Bring the integral up to `now`.
    fn advance(&mut self, now: Time) {
        if now > self.since {
            self.area += u128::from(self.unread()) * u128::from(now.since(self.since).0);
            self.since = now;
        }
    }

    /// The driver took frames with `bytes` of payload from the ring at `now`.
    pub(crate) fn taken(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        self.taken += bytes;
    }

    /// A read at `now` copied `bytes`.
    pub(crate) fn read(&mut self, now: Time, bytes: u64) {
        self.advance(now);
        self.read += bytes;
    }

    /// A read copied `llc` bytes from the cache and `memory` from memory.
    pub(crate) fn copied(&mut self, llc: u64, memory: u64) {
        self.llc_bytes += llc;
        self.memory_bytes += memory;
    }

    /// The statistics of the measured interval, which ends at `until`.
    pub(crate) fn report(&self, until: Time) -> RxCopyStats {
        let mut end = *self;
        end.advance(until);
        let span = until.since(self.from.min(until)).0;
        let mean = if span > 0 { end.area as f64 / span as f64 } else { self.unread() as f64 };
        let read = self.read - self.read_before;
        // Bytes read per picosecond; the wait in picoseconds, then seconds.
        let wait_s = if read > 0 { mean / (read as f64 / span as f64) / 1e12 } else { 0.0 };
        RxCopyStats {
            llc_bytes: self.llc_bytes,
            memory_bytes: self.memory_bytes,
            mean_unread_bytes: mean,
            read_bytes: read,
            mean_wait_s: wait_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dur;

    fn at(us: u64) -> Time {
        Time::ZERO + Dur(us * 1_000_000)
    }

    #[test]
    fn the_mean_weighs_each_amount_by_how_long_it_waited() {
        let mut c = RxCopy::default();
        c.restart(at(10));
        // 1 000 bytes for 10 us, then 3 000 for 30 us: (10 000 + 90 000) / 40.
        c.taken(at(10), 1_000);
        c.taken(at(20), 2_000);
        c.read(at(50), 3_000);
        let r = c.report(at(50));
        assert!((r.mean_unread_bytes - 2_500.0).abs() < 1e-9, "{r:?}");
        // 3 000 bytes read in 40 us: 2 500 bytes waiting is 33.3 us of reading.
        assert_eq!(r.read_bytes, 3_000);
        assert!((r.mean_wait_s - 2_500.0 / 3_000.0 * 40e-6).abs() < 1e-15, "{r:?}");
        // What still waits at the end counts up to the end.
        c.taken(at(50), 500);
        let r = c.report(at(90));
        assert!((r.mean_unread_bytes - (100_000.0 + 500.0 * 40.0) / 80.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn a_restart_forgets_the_warm_up_but_not_what_waits() {
        let mut c = RxCopy::default();
        c.taken(at(0), 9_000);
        c.read(at(4), 8_300);
        c.copied(100, 200);
        c.restart(at(5));
        c.copied(1, 2);
        let r = c.report(at(15));
        assert_eq!((r.llc_bytes, r.memory_bytes, r.read_bytes, r.mean_wait_s), (1, 2, 0, 0.0));
        assert!((r.mean_unread_bytes - 700.0).abs() < 1e-9, "{r:?}");
    }
}
