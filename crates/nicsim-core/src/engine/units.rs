//! Unit-bearing values, parsed once at the edge into integer engine units.
//!
//! | type | engine unit | accepted units |
//! | --- | --- | --- |
//! | [`Bandwidth`] | bit/s | `bps kbps Mbps Gbps Tbps` (also `bit/s`, `Kbps`), `B/s kB/s MB/s GB/s`, `KiB/s MiB/s GiB/s` |
//! | [`Frequency`] | Hz | `Hz kHz MHz GHz` |
//! | [`Duration`] | ps | `ps ns us µs ms s` |
//! | [`Size`] | byte | `B kB MB GB` (powers of 1000), `KiB MiB GiB` (powers of 1024) |
//!
//! The number is a decimal (`1.2us`, `64KiB`), no exponent, no sign. A value
//! that does not come out as a whole number of engine units (`1.5B`,
//! `0.1ps`) is rejected rather than rounded, and so is an ambiguous unit:
//! `KB` could mean 1000 or 1024 bytes, so it must be written `kB` or `KiB`.
//! Bandwidths are decimal, as in networking (`1Gbps` = 10⁹ bit/s).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A quantity whose text form carries a unit.
pub trait Quantity: Sized + Copy {
    /// What the quantity is, for error messages ("a bandwidth").
    const WHAT: &'static str;
    /// An example for error messages.
    const EXAMPLE: &'static str;
    /// Accepted units and their size in engine units (exact integers).
    const UNITS: &'static [(&'static str, u128)];
    /// Units that are rejected, with the reason.
    const AMBIGUOUS: &'static [(&'static str, &'static str)] = &[];
    /// Name of the engine unit ("bit/s").
    const BASE: &'static str;
    /// Units used when rendering a value (the first of equal factors wins).
    const SHOWN: &'static [&'static str];
    /// Wrap an engine-unit value.
    fn from_base(v: u64) -> Self;
    /// The engine-unit value.
    fn base(self) -> u64;

    /// Parse `text` into the quantity.
    fn parse(text: &str) -> Result<Self, String> {
        parse_quantity::<Self>(text)
    }
}

fn parse_quantity<Q: Quantity>(text: &str) -> Result<Q, String> {
    let s = text.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = (&s[..split], s[split..].trim());
    if num.is_empty() {
        return Err(format!("expected {} such as \"{}\", got \"{text}\"", Q::WHAT, Q::EXAMPLE));
    }
    if unit.is_empty() {
        return Err(format!("missing unit in \"{text}\": write {} such as \"{}\"", Q::WHAT, Q::EXAMPLE));
    }
    if let Some((_, why)) = Q::AMBIGUOUS.iter().find(|(u, _)| *u == unit) {
        return Err(format!("ambiguous unit \"{unit}\" in \"{text}\": {why}"));
    }
    let Some(&(_, factor)) = Q::UNITS.iter().find(|(u, _)| *u == unit) else {
        let known: Vec<&str> = Q::UNITS.iter().map(|(u, _)| *u).collect();
        return Err(format!("unknown unit \"{unit}\" in \"{text}\" for {}; use one of {}", Q::WHAT, known.join(", ")));
    };
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(format!("malformed number in \"{text}\""));
    }
    // Trailing zeros after the point do not change the value; without them
    // a fraction too long for 10^len to fit in a u128 cannot be a whole
    // number of engine units (the mantissa × factor is below 10^39).
    let frac_part = frac_part.trim_end_matches('0');
    let digits: String = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 30 {
        return Err(format!("\"{text}\" is too large"));
    }
    let mantissa: u128 =
        if digits.is_empty() { 0 } else { digits.parse().map_err(|_| format!("malformed number in \"{text}\""))? };
    let scaled = mantissa.checked_mul(factor).ok_or_else(|| format!("\"{text}\" is too large"))?;
    let scale = u32::try_from(frac_part.len()).ok().and_then(|n| 10u128.checked_pow(n));
    if scale.is_none_or(|scale| scaled % scale != 0) {
        return Err(format!(
            "\"{text}\" is not a whole number of {} (the engine's resolution); it would be rounded",
            Q::BASE
        ));
    }
    let value = scaled / scale.expect("checked above");
    let value = u64::try_from(value).map_err(|_| format!("\"{text}\" is too large"))?;
    Ok(Q::from_base(value))
}

/// Render `v` engine units with the largest unit that divides it exactly.
fn render<Q: Quantity>(v: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let v = u128::from(v);
    let best = Q::UNITS
        .iter()
        .filter(|(unit, factor)| Q::SHOWN.contains(unit) && (v == 0 && *factor == 1 || v != 0 && v % factor == 0))
        .rev()
        .max_by_key(|(_, factor)| *factor)
        .expect("the base unit divides everything");
    write!(f, "{}{}", v / best.1, best.0)
}

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $what:expr, $example:expr, $base:expr, $units:expr, $ambiguous:expr, $shown:expr) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u64);

        impl Quantity for $name {
            const WHAT: &'static str = $what;
            const EXAMPLE: &'static str = $example;
            const UNITS: &'static [(&'static str, u128)] = $units;
            const AMBIGUOUS: &'static [(&'static str, &'static str)] = $ambiguous;
            const BASE: &'static str = $base;
            const SHOWN: &'static [&'static str] = $shown;
            fn from_base(v: u64) -> Self {
                $name(v)
            }
            fn base(self) -> u64 {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                render::<$name>(self.0, f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                <$name as Quantity>::parse(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "{} as a string with a unit, such as \"{}\"", $what, $example)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        <$name as Quantity>::parse(v).map_err(E::custom)
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("missing unit in {v}: write {} such as \"{}\"", $what, $example)))
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("missing unit in {v}: write {} such as \"{}\"", $what, $example)))
                    }
                    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("missing unit in {v}: write {} such as \"{}\"", $what, $example)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

const K: u128 = 1_000;
const KI: u128 = 1_024;

quantity!(
    /// A data rate in bit/s.
    Bandwidth, "a bandwidth", "1Gbps", "bit/s",
    &[
        ("bps", 1), ("bit/s", 1), ("kbps", K), ("Kbps", K), ("Mbps", K * K), ("Gbps", K * K * K),
        ("Tbps", K * K * K * K), ("kbit/s", K), ("Mbit/s", K * K), ("Gbit/s", K * K * K),
        ("B/s", 8), ("kB/s", 8 * K), ("MB/s", 8 * K * K), ("GB/s", 8 * K * K * K),
        ("KiB/s", 8 * KI), ("MiB/s", 8 * KI * KI), ("GiB/s", 8 * KI * KI * KI),
    ],
    &[("KB/s", "write kB/s (1000 B/s) or KiB/s (1024 B/s)"), ("GBps", "write GB/s (bytes) or Gbps (bits)"),
      ("MBps", "write MB/s (bytes) or Mbps (bits)"), ("Mb", "a bandwidth needs a rate unit: Mbps"),
      ("Gb", "a bandwidth needs a rate unit: Gbps")],
    &["bps", "kbps", "Mbps", "Gbps", "Tbps"]
);

quantity!(
    /// A clock frequency in Hz.
    Frequency, "a frequency", "400MHz", "Hz",
    &[("Hz", 1), ("kHz", K), ("MHz", K * K), ("GHz", K * K * K)],
    &[("mhz", "write MHz"), ("Mhz", "write MHz"), ("ghz", "write GHz"), ("Ghz", "write GHz")],
    &["Hz", "kHz", "MHz", "GHz"]
);

quantity!(
    /// A span of time in picoseconds.
    Duration, "a duration", "1.2us", "ps",
    &[("ps", 1), ("ns", K), ("us", K * K), ("µs", K * K), ("ms", K * K * K), ("s", K * K * K * K)],
    &[("m", "minutes or milli? write ms, or seconds as s"), ("sec", "write s")],
    &["ps", "ns", "us", "ms", "s"]
);

quantity!(
    /// An amount of data in bytes.
    Size, "a size", "64KiB", "bytes",
    &[("B", 1), ("kB", K), ("MB", K * K), ("GB", K * K * K), ("KiB", KI), ("MiB", KI * KI), ("GiB", KI * KI * KI)],
    &[("KB", "write kB (1000 bytes) or KiB (1024 bytes)"), ("Kb", "sizes are in bytes: write kB or KiB"),
      ("b", "sizes are in bytes: write B"), ("kb", "sizes are in bytes: write kB or KiB")],
    &["B", "kB", "MB", "GB", "KiB", "MiB", "GiB"]
);

impl Duration {
    /// As an engine span.
    pub fn dur(self) -> super::Dur {
        super::Dur(self.0)
    }
}

impl Bandwidth {
    /// Picoseconds to move `bits` at this rate, as (whole ps, remainder in
    /// units of 1/rate ps) so callers can carry the remainder exactly.
    pub fn ps_for_bits(self, bits: u64) -> (u64, u64) {
        if let Some(num) = bits.checked_mul(super::time::PS_PER_S) {
            return (num / self.0, num % self.0);
        }
        let num = u128::from(bits) * u128::from(super::time::PS_PER_S);
        let rate = u128::from(self.0);
        ((num / rate) as u64, (num % rate) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_issue_examples() {
        assert_eq!(Bandwidth::parse("1Gbps"), Ok(Bandwidth(1_000_000_000)));
        assert_eq!(Frequency::parse("400MHz"), Ok(Frequency(400_000_000)));
        assert_eq!(Duration::parse("1.2us"), Ok(Duration(1_200_000)));
        assert_eq!(Size::parse("9000B"), Ok(Size(9000)));
        assert_eq!(Size::parse("64KiB"), Ok(Size(65_536)));
        assert_eq!(Bandwidth::parse("400Gbps"), Ok(Bandwidth(400_000_000_000)));
        assert_eq!(Bandwidth::parse("126MB/s"), Ok(Bandwidth(1_008_000_000)));
        assert_eq!(Duration::parse(" 2 ms "), Ok(Duration(2_000_000_000)));
        assert_eq!(Duration::parse("0.5ns"), Ok(Duration(500)));
        assert_eq!(Size::parse("1.5KiB"), Ok(Size(1536)));
    }

    #[test]
    fn rejects_lossy_values() {
        assert!(Size::parse("1.5B").unwrap_err().contains("whole number"));
        assert!(Duration::parse("0.1ps").unwrap_err().contains("whole number"));
        assert!(Bandwidth::parse("0.1bps").unwrap_err().contains("whole number"));
    }

    #[test]
    fn rejects_ambiguous_and_unknown_units() {
        assert!(Size::parse("4KB").unwrap_err().contains("ambiguous"));
        assert!(Bandwidth::parse("1GBps").unwrap_err().contains("ambiguous"));
        assert!(Bandwidth::parse("1Gbs").unwrap_err().contains("unknown unit"));
        assert!(Size::parse("1500").unwrap_err().contains("missing unit"));
        assert!(Size::parse("B").is_err());
        assert!(Size::parse("-5B").is_err());
        assert!(Size::parse("1.2.3B").is_err());
        assert!(Size::parse("1e3B").is_err());
    }

    #[test]
    fn long_fractions_are_exact_not_overflowing() {
        // Found by the `units` fuzz target: 46 fraction digits made 10^46
        // overflow (a panic in debug builds, a wrapped scale in release).
        let text = format!(".{}4GB", "0".repeat(45));
        assert!(Size::parse(&text).unwrap_err().contains("whole number"));
        assert_eq!(Size::parse(&format!("1.{}GB", "0".repeat(50))), Ok(Size(1_000_000_000)));
        assert_eq!(Duration::parse(&format!("0.{}1s", "0".repeat(11))), Ok(Duration(1)));
        assert!(Duration::parse(&format!("0.{}1s", "0".repeat(12))).unwrap_err().contains("whole number"));
    }

    #[test]
    fn rejects_overflow() {
        assert!(Size::parse("99999999999999999999GiB").unwrap_err().contains("too large"));
        assert!(Duration::parse("1000000000000000000000000000000000s").is_err());
    }

    #[test]
    fn display_round_trips_with_largest_exact_unit() {
        for text in ["1Gbps", "400MHz", "1200ns", "64KiB", "9kB", "0ps", "1500B", "10Mbps"] {
            let shown = match text {
                t if t.ends_with("bps") => Bandwidth::parse(t).unwrap().to_string(),
                t if t.ends_with("Hz") => Frequency::parse(t).unwrap().to_string(),
                t if t.ends_with('s') => Duration::parse(t).unwrap().to_string(),
                t => Size::parse(t).unwrap().to_string(),
            };
            assert_eq!(shown, text);
        }
        assert_eq!(Size(1_000_000).to_string(), "1MB");
        assert_eq!(Size(2048).to_string(), "2KiB");
        assert_eq!(Bandwidth(8_000_000_000).to_string(), "8Gbps");
        assert_eq!(Duration(1_000_000).to_string(), "1us");
    }

    #[test]
    fn deserialises_from_toml_strings_only() {
        #[derive(serde::Deserialize)]
        struct T {
            rate: Bandwidth,
        }
        let ok: T = toml::from_str("rate = \"10Gbps\"").unwrap();
        assert_eq!(ok.rate, Bandwidth(10_000_000_000));
        let err = toml::from_str::<T>("rate = 1000").err().unwrap().to_string();
        assert!(err.contains("missing unit"), "{err}");
    }

    #[test]
    fn bit_times_carry_remainders() {
        // 672 bits at 400 Gb/s is exactly 1680 ps.
        assert_eq!(Bandwidth(400_000_000_000).ps_for_bits(672), (1680, 0));
        // 1 bit at 3 bit/s is a third of a second.
        assert_eq!(Bandwidth(3).ps_for_bits(1), (333_333_333_333, 1));
    }
}
