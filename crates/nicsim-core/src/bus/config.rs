//! Bus configuration: which bus joins a NIC to memory, its knobs with their
//! defaults and sources, parsing that names the field of every error, and
//! range checks.
//!
//! In a scenario a bus is a table with a `kind` and that kind's knobs; any
//! knob left out takes its default:
//!
//! ```toml
//! bus = { kind = "pci" }                               # 32-bit, 33 MHz
//! bus = { kind = "pci", width_bits = 64, clock = "66MHz" }
//! bus = { kind = "pci-x", clock = "100MHz" }
//! bus = { kind = "pcie", gen = 3, lanes = 8, max_payload = "128B" }
//! bus = { kind = "ideal" }                             # no cost at all
//! ```
//!
//! serde's internally tagged enums buffer the table before choosing the
//! variant, which loses the field path of errors (`hosts[0].bus` instead of
//! `hosts[0].bus.lanes`) and lets a unit variant accept unknown fields, so
//! [`BusConfig`] is deserialised by a small map visitor instead; it is
//! serialised (fully resolved) by serde's internally tagged derive.

use std::convert::Infallible;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::engine::time::PS_PER_S;
use crate::engine::units::{Duration, Frequency, Size};
use crate::error::ConfigError;

/// Default PCI data width in bits: the common 32-bit slot.
pub const PCI_WIDTH_BITS: u32 = 32;
/// Default PCI clock in Hz. The nominal clock is 33⅓ MHz; 33 MHz gives the
/// 132 MB/s "theoretical" figure against which Kurmann et al. quote their
/// 126 MB/s measurement, so the calibration below uses it.
pub const PCI_CLOCK_HZ: u64 = 33_000_000;
/// Default largest burst of PCI and PCI-X, bytes: 512 B, the reset value of
/// PCI-X's Maximum Memory Read Byte Count (also a typical bridge prefetch size).
pub const MAX_BURST: u64 = 512;
/// Default PCI cost of one burst beyond its data cycles, bus cycles:
/// arbitration/idle, address phase, DEVSEL decode, target initial wait and
/// turnaround. Calibrated so 32-bit/33 MHz bursts of 512 B (128 data cycles)
/// deliver 132 MB/s × 128/134 = 126.1 MB/s, the 126 MB/s Kurmann et al.
/// measured for large DMA transfers on an Intel 440BX chipset.
pub const PCI_OVERHEAD_CYCLES: u32 = 6;
/// Default PCI-X clock in Hz: PCI-X 133, the fastest PCI-X 1.0 mode.
pub const PCIX_CLOCK_HZ: u64 = 133_000_000;
/// Default PCI-X cost of one burst beyond its data cycles, bus cycles.
/// Estimate (no measurement at hand): address 1 + attribute 1 + target
/// response 2 + initial wait 2 + turnaround 1 + idle 1; PCI-X adds the
/// attribute phase and forbids zero-wait decode, so it costs more than PCI.
pub const PCIX_OVERHEAD_CYCLES: u32 = 8;
/// Host memory read latency seen from a PCI or PCI-X bus, ps; the default of
/// `read_latency_cycles` is this rounded up to whole bus cycles (8 at 33 MHz,
/// 16 at 66 MHz, 32 at 133 MHz). Estimate: a DRAM access through a host
/// bridge of the era; also the PCI 2.1 limit of 16 clocks of target initial
/// latency at 66 MHz.
pub const BUS_READ_LATENCY_PS: u64 = 240_000;
/// Default PCIe maximum payload size (MPS), bytes: 256 B, what most x86
/// server root complexes support and firmware sets (the spec's reset value is 128 B).
pub const PCIE_MAX_PAYLOAD: u64 = 256;
/// Default PCIe maximum read request size (MRRS), bytes: 512 B, the spec's reset value.
pub const PCIE_MAX_READ_REQUEST: u64 = 512;
/// Default PCIe read latency, ps: from the end of a read request on the link
/// to the start of its first completion. Estimate, of the order of the
/// DMA read latencies pcie-bench measured on Xeon servers (Neugebauer et
/// al., SIGCOMM 2018: a few hundred ns to about 1 µs).
pub const PCIE_READ_LATENCY_PS: u64 = 500_000;

/// Which I/O bus connects the NIC to memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BusConfig {
    /// Conventional PCI: one shared, half-duplex bus moving data in bursts.
    Pci {
        /// Data width, 32 or 64 bits.
        width_bits: u32,
        /// Bus clock, 25 to 66 MHz (default 33 MHz).
        clock: Frequency,
        /// Largest burst; longer transfers are split (default 512 B).
        max_burst: Size,
        /// Bus cycles each burst costs beyond its data cycles (default 6, calibrated to 126 MB/s).
        overhead_cycles: u32,
        /// Extra bus cycles per burst when reading host memory (default 240 ns in cycles).
        read_latency_cycles: u32,
    },
    /// PCI-X: 64 bits wide, the PCI burst model with its own defaults.
    PciX {
        /// Bus clock, 50 to 133 MHz (default 133 MHz).
        clock: Frequency,
        /// Largest burst; longer transfers are split (default 512 B).
        max_burst: Size,
        /// Bus cycles each burst costs beyond its data cycles (default 8, estimate).
        overhead_cycles: u32,
        /// Extra bus cycles per burst when reading host memory (default 240 ns in cycles).
        read_latency_cycles: u32,
    },
    /// PCI Express: a full-duplex serial link carrying TLPs.
    Pcie {
        /// Generation 1 to 5 (2.5, 5, 8, 16, 32 GT/s per lane).
        gen: u8,
        /// Link width: 1, 2, 4, 8 or 16 lanes.
        lanes: u8,
        /// Largest write payload per TLP (MPS), 128 B to 4 KiB (default 256 B).
        max_payload: Size,
        /// Largest read request (MRRS), 128 B to 4 KiB (default 512 B).
        max_read_request: Size,
        /// Largest payload of one read completion TLP, 64 B to `max_payload`
        /// (default `max_payload`; root complexes that split at their 64 B
        /// read completion boundary need 64 B).
        completion_payload: Size,
        /// From the end of a read request to the start of its completions (default 500 ns, estimate).
        read_latency: Duration,
        /// DLLP bytes charged to every TLP (default 0 B; 16 B = one ACK and
        /// one UpdateFC per TLP, the worst case of fully bidirectional traffic).
        dllp_per_tlp: Size,
    },
    /// No cost: infinite bandwidth, zero time.
    Ideal,
}

impl Default for BusConfig {
    /// The ideal bus: DMA and MMIO are free, as before buses were modelled.
    fn default() -> Self {
        BusConfig::Ideal
    }
}

/// `read_latency_cycles` default for a bus clocked at `clock`: [`BUS_READ_LATENCY_PS`] in whole cycles, rounded up.
pub fn default_read_latency_cycles(clock: Frequency) -> u32 {
    let cycles = (u128::from(BUS_READ_LATENCY_PS) * u128::from(clock.0)).div_ceil(u128::from(PS_PER_S));
    u32::try_from(cycles).unwrap_or(u32::MAX)
}

impl BusConfig {
    /// 32-bit, 33 MHz PCI with the default burst model (126 MB/s for large writes).
    pub fn pci_32_33() -> Self {
        Self::pci(32, Frequency(PCI_CLOCK_HZ))
    }

    /// 64-bit, 66 MHz PCI with the same burst model.
    pub fn pci_64_66() -> Self {
        Self::pci(64, Frequency(66_000_000))
    }

    /// 64-bit PCI-X at 133 MHz with its defaults.
    pub fn pci_x_133() -> Self {
        let clock = Frequency(PCIX_CLOCK_HZ);
        BusConfig::PciX {
            clock,
            max_burst: Size(MAX_BURST),
            overhead_cycles: PCIX_OVERHEAD_CYCLES,
            read_latency_cycles: default_read_latency_cycles(clock),
        }
    }

    /// PCIe generation `gen` with `lanes` lanes and the default MPS, MRRS and read latency.
    pub fn pcie(gen: u8, lanes: u8) -> Self {
        BusConfig::Pcie {
            gen,
            lanes,
            max_payload: Size(PCIE_MAX_PAYLOAD),
            max_read_request: Size(PCIE_MAX_READ_REQUEST),
            completion_payload: Size(PCIE_MAX_PAYLOAD),
            read_latency: Duration(PCIE_READ_LATENCY_PS),
            dllp_per_tlp: Size(0),
        }
    }

    fn pci(width_bits: u32, clock: Frequency) -> Self {
        BusConfig::Pci {
            width_bits,
            clock,
            max_burst: Size(MAX_BURST),
            overhead_cycles: PCI_OVERHEAD_CYCLES,
            read_latency_cycles: default_read_latency_cycles(clock),
        }
    }

    /// The `kind` as written in a scenario (`"pci"`, `"pci-x"`, `"pcie"`, `"ideal"`).
    pub fn kind(&self) -> &'static str {
        match self {
            BusConfig::Pci { .. } => Kind::Pci.name(),
            BusConfig::PciX { .. } => Kind::PciX.name(),
            BusConfig::Pcie { .. } => Kind::Pcie.name(),
            BusConfig::Ideal => Kind::Ideal.name(),
        }
    }

    /// Check ranges; `path` is where the bus sits in the scenario (`hosts[0].bus`).
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let at = |field: &str| if path.is_empty() { field.to_string() } else { format!("{path}.{field}") };
        let err = |field: &str, reason: String| Err(ConfigError::new(at(field), reason));
        match *self {
            BusConfig::Pci { width_bits, clock, max_burst, overhead_cycles, read_latency_cycles } => {
                if width_bits != 32 && width_bits != 64 {
                    return err("width_bits", format!("must be 32 or 64, got {width_bits}"));
                }
                if !(25_000_000..=66_000_000).contains(&clock.0) {
                    return err("clock", format!("must be 25MHz to 66MHz (PCI 2.x), got {clock}"));
                }
                burst_checks(&at, u64::from(width_bits / 8), max_burst, overhead_cycles, read_latency_cycles)
            }
            BusConfig::PciX { clock, max_burst, overhead_cycles, read_latency_cycles } => {
                if !(50_000_000..=133_000_000).contains(&clock.0) {
                    return err("clock", format!("must be 50MHz to 133MHz (PCI-X 1.0), got {clock}"));
                }
                burst_checks(&at, 8, max_burst, overhead_cycles, read_latency_cycles)
            }
            BusConfig::Pcie {
                gen,
                lanes,
                max_payload,
                max_read_request,
                completion_payload,
                read_latency,
                dllp_per_tlp,
            } => {
                if !(1..=5).contains(&gen) {
                    return err("gen", format!("must be 1 to 5, got {gen}"));
                }
                if ![1, 2, 4, 8, 16].contains(&lanes) {
                    return err("lanes", format!("must be 1, 2, 4, 8 or 16, got {lanes}"));
                }
                for (field, size) in [("max_payload", max_payload), ("max_read_request", max_read_request)] {
                    if !size.0.is_power_of_two() || !(128..=4096).contains(&size.0) {
                        return err(field, format!("must be a power of two from 128B to 4KiB, got {size}"));
                    }
                }
                let cpl = completion_payload.0;
                if !cpl.is_power_of_two() || !(64..=max_payload.0).contains(&cpl) {
                    return err(
                        "completion_payload",
                        format!(
                            "must be a power of two from 64B to max_payload ({max_payload}), got {completion_payload}"
                        ),
                    );
                }
                if read_latency.0 > 100 * crate::engine::time::PS_PER_US {
                    return err("read_latency", format!("must be at most 100us, got {read_latency}"));
                }
                if dllp_per_tlp.0 > 64 {
                    return err("dllp_per_tlp", format!("must be at most 64B, got {dllp_per_tlp}"));
                }
                Ok(())
            }
            BusConfig::Ideal => Ok(()),
        }
    }
}

fn burst_checks(
    at: &dyn Fn(&str) -> String,
    width: u64,
    max_burst: Size,
    overhead_cycles: u32,
    read_latency_cycles: u32,
) -> Result<(), ConfigError> {
    if !max_burst.0.is_multiple_of(width) || !(width..=4096).contains(&max_burst.0) {
        return Err(ConfigError::new(
            at("max_burst"),
            format!("must be a multiple of the bus width ({width}B) from {width}B to 4KiB, got {max_burst}"),
        ));
    }
    if overhead_cycles > 64 {
        return Err(ConfigError::new(at("overhead_cycles"), format!("must be 0 to 64, got {overhead_cycles}")));
    }
    if read_latency_cycles > 1024 {
        return Err(ConfigError::new(
            at("read_latency_cycles"),
            format!("must be 0 to 1024, got {read_latency_cycles}"),
        ));
    }
    Ok(())
}

/// The `kind` tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Kind {
    Pci,
    PciX,
    Pcie,
    Ideal,
}

/// Every key a bus table may hold (for "unknown field" messages).
const FIELDS: &[&str] = &[
    "kind",
    "width_bits",
    "clock",
    "max_burst",
    "overhead_cycles",
    "read_latency_cycles",
    "gen",
    "lanes",
    "max_payload",
    "max_read_request",
    "completion_payload",
    "read_latency",
    "dllp_per_tlp",
];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Pci => "pci",
            Kind::PciX => "pci-x",
            Kind::Pcie => "pcie",
            Kind::Ideal => "ideal",
        }
    }

    fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Pci => &["width_bits", "clock", "max_burst", "overhead_cycles", "read_latency_cycles"],
            Kind::PciX => &["clock", "max_burst", "overhead_cycles", "read_latency_cycles"],
            Kind::Pcie => &[
                "gen",
                "lanes",
                "max_payload",
                "max_read_request",
                "completion_payload",
                "read_latency",
                "dllp_per_tlp",
            ],
            Kind::Ideal => &[],
        }
    }

    fn accepts(self) -> String {
        match self.fields() {
            [] => format!("kind \"{}\" takes no other fields", self.name()),
            fields => format!("kind \"{}\" takes {}", self.name(), quoted(fields)),
        }
    }
}

fn quoted(fields: &[&str]) -> String {
    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
}

/// A value seed that fails with a message, so the error carries the key's path.
struct Reject(String);

impl<'de> DeserializeSeed<'de> for Reject {
    type Value = Infallible;
    fn deserialize<D: Deserializer<'de>>(self, _: D) -> Result<Infallible, D::Error> {
        Err(de::Error::custom(self.0))
    }
}

/// Reads `kind`, rejecting it if a key seen before it does not belong to it.
struct KindSeed<'a>(&'a [&'static str]);

impl<'de> DeserializeSeed<'de> for KindSeed<'_> {
    type Value = Kind;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        let kind = Kind::deserialize(d)?;
        if let Some(field) = self.0.iter().find(|f| !kind.fields().contains(f)) {
            return Err(de::Error::custom(format!("`{field}` is not a knob of this kind; {}", kind.accepts())));
        }
        Ok(kind)
    }
}

/// The keys of one bus table, before defaults.
#[derive(Default)]
struct Raw {
    width_bits: Option<u32>,
    clock: Option<Frequency>,
    max_burst: Option<Size>,
    overhead_cycles: Option<u32>,
    read_latency_cycles: Option<u32>,
    gen: Option<u8>,
    lanes: Option<u8>,
    max_payload: Option<Size>,
    max_read_request: Option<Size>,
    completion_payload: Option<Size>,
    read_latency: Option<Duration>,
    dllp_per_tlp: Option<Size>,
}

struct BusVisitor;

impl<'de> Visitor<'de> for BusVisitor {
    type Value = BusConfig;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a bus table such as {{ kind = \"pcie\", gen = 3, lanes = 8 }}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BusConfig, A::Error> {
        let mut raw = Raw::default();
        let mut kind: Option<Kind> = None;
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let Some(&field) = FIELDS.iter().find(|f| **f == key) else {
                let why = format!("unknown field `{key}`, expected one of {}", quoted(FIELDS));
                return map.next_value_seed(Reject(why)).map(|never| match never {});
            };
            if seen.contains(&field) {
                return map.next_value_seed(Reject(format!("duplicate field `{field}`"))).map(|never| match never {});
            }
            if field == "kind" {
                kind = Some(map.next_value_seed(KindSeed(&seen))?);
                seen.push(field);
                continue;
            }
            if let Some(k) = kind.filter(|k| !k.fields().contains(&field)) {
                let why = format!("not a knob of kind \"{}\"; {}", k.name(), k.accepts());
                return map.next_value_seed(Reject(why)).map(|never| match never {});
            }
            seen.push(field);
            match field {
                "width_bits" => raw.width_bits = Some(map.next_value()?),
                "clock" => raw.clock = Some(map.next_value()?),
                "max_burst" => raw.max_burst = Some(map.next_value()?),
                "overhead_cycles" => raw.overhead_cycles = Some(map.next_value()?),
                "read_latency_cycles" => raw.read_latency_cycles = Some(map.next_value()?),
                "gen" => raw.gen = Some(map.next_value()?),
                "lanes" => raw.lanes = Some(map.next_value()?),
                "max_payload" => raw.max_payload = Some(map.next_value()?),
                "max_read_request" => raw.max_read_request = Some(map.next_value()?),
                "completion_payload" => raw.completion_payload = Some(map.next_value()?),
                "read_latency" => raw.read_latency = Some(map.next_value()?),
                "dllp_per_tlp" => raw.dllp_per_tlp = Some(map.next_value()?),
                _ => unreachable!("every name in FIELDS is handled"),
            }
        }
        let Some(kind) = kind else {
            return Err(de::Error::custom("missing field `kind` (\"pci\", \"pci-x\", \"pcie\" or \"ideal\")"));
        };
        Ok(match kind {
            Kind::Pci => {
                let clock = raw.clock.unwrap_or(Frequency(PCI_CLOCK_HZ));
                BusConfig::Pci {
                    width_bits: raw.width_bits.unwrap_or(PCI_WIDTH_BITS),
                    clock,
                    max_burst: raw.max_burst.unwrap_or(Size(MAX_BURST)),
                    overhead_cycles: raw.overhead_cycles.unwrap_or(PCI_OVERHEAD_CYCLES),
                    read_latency_cycles: raw.read_latency_cycles.unwrap_or_else(|| default_read_latency_cycles(clock)),
                }
            }
            Kind::PciX => {
                let clock = raw.clock.unwrap_or(Frequency(PCIX_CLOCK_HZ));
                BusConfig::PciX {
                    clock,
                    max_burst: raw.max_burst.unwrap_or(Size(MAX_BURST)),
                    overhead_cycles: raw.overhead_cycles.unwrap_or(PCIX_OVERHEAD_CYCLES),
                    read_latency_cycles: raw.read_latency_cycles.unwrap_or_else(|| default_read_latency_cycles(clock)),
                }
            }
            Kind::Pcie => {
                let gen = raw.gen.ok_or_else(|| de::Error::custom("missing field `gen` (PCIe generation 1 to 5)"))?;
                let lanes = raw.lanes.ok_or_else(|| de::Error::custom("missing field `lanes` (1, 2, 4, 8 or 16)"))?;
                let max_payload = raw.max_payload.unwrap_or(Size(PCIE_MAX_PAYLOAD));
                BusConfig::Pcie {
                    gen,
                    lanes,
                    max_payload,
                    max_read_request: raw.max_read_request.unwrap_or(Size(PCIE_MAX_READ_REQUEST)),
                    completion_payload: raw.completion_payload.unwrap_or(max_payload),
                    read_latency: raw.read_latency.unwrap_or(Duration(PCIE_READ_LATENCY_PS)),
                    dllp_per_tlp: raw.dllp_per_tlp.unwrap_or(Size(0)),
                }
            }
            Kind::Ideal => BusConfig::Ideal,
        })
    }
}

impl<'de> Deserialize<'de> for BusConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BusVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Host {
        bus: BusConfig,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        hosts: Vec<Host>,
    }

    /// Parse `[[hosts]]` tables the way `config::parse` does: field path and message.
    fn parse(text: &str) -> Result<Vec<BusConfig>, (String, String)> {
        let doc: Doc = serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
            let path = e.path().to_string();
            (path, e.into_inner().message().to_string())
        })?;
        Ok(doc.hosts.into_iter().map(|h| h.bus).collect())
    }

    fn one(bus: &str) -> Result<BusConfig, (String, String)> {
        parse(&format!("[[hosts]]\nbus = {bus}\n")).map(|mut v| v.remove(0))
    }

    fn invalid(bus: BusConfig) -> String {
        bus.validate("hosts[0].bus").unwrap_err().to_string()
    }

    #[test]
    fn defaults_fill_in_and_match_the_constructors() {
        let pcie = one(r#"{ kind = "pcie", gen = 3, lanes = 8 }"#).unwrap();
        assert_eq!(pcie, BusConfig::pcie(3, 8));
        let BusConfig::Pcie { max_payload, max_read_request, completion_payload, read_latency, dllp_per_tlp, .. } =
            pcie
        else {
            panic!("{pcie:?}")
        };
        assert_eq!((max_payload, max_read_request, completion_payload), (Size(256), Size(512), Size(256)));
        assert_eq!((read_latency, dllp_per_tlp), (Duration(500_000), Size(0)));
        assert_eq!(one(r#"{ kind = "pci" }"#).unwrap(), BusConfig::pci_32_33());
        let pci64 = one(r#"{ kind = "pci", width_bits = 64, clock = "66MHz" }"#).unwrap();
        assert_eq!(pci64, BusConfig::pci_64_66());
        assert_eq!(one(r#"{ kind = "pci-x" }"#).unwrap(), BusConfig::pci_x_133());
        assert_eq!(one(r#"{ kind = "ideal" }"#).unwrap(), BusConfig::Ideal);
        for bus in [BusConfig::pci_32_33(), BusConfig::pci_64_66(), BusConfig::pci_x_133(), BusConfig::pcie(5, 16)] {
            bus.validate("bus").unwrap();
        }
    }

    #[test]
    fn read_latency_default_is_240ns_in_whole_cycles() {
        // 240 ns × 33 MHz = 7.92 → 8; × 66 MHz = 15.84 → 16; × 133 MHz = 31.92 → 32; × 100 MHz = 24 exactly.
        assert_eq!(default_read_latency_cycles(Frequency(33_000_000)), 8);
        assert_eq!(default_read_latency_cycles(Frequency(66_000_000)), 16);
        assert_eq!(default_read_latency_cycles(Frequency(133_000_000)), 32);
        assert_eq!(default_read_latency_cycles(Frequency(100_000_000)), 24);
        let BusConfig::PciX { read_latency_cycles, .. } = one(r#"{ kind = "pci-x", clock = "100MHz" }"#).unwrap()
        else {
            panic!()
        };
        assert_eq!(read_latency_cycles, 24);
    }

    #[test]
    fn completion_payload_defaults_to_the_given_max_payload() {
        let bus = one(r#"{ kind = "pcie", gen = 2, lanes = 4, max_payload = "512B" }"#).unwrap();
        let BusConfig::Pcie { completion_payload, .. } = bus else { panic!() };
        assert_eq!(completion_payload, Size(512));
    }

    #[test]
    fn a_bus_table_under_its_own_header_parses_too() {
        let buses = parse("[[hosts]]\n[hosts.bus]\nkind = \"pcie\"\ngen = 1\nlanes = 1\n").unwrap();
        assert_eq!(buses, vec![BusConfig::pcie(1, 1)]);
    }

    #[test]
    fn parse_errors_name_the_field() {
        let e = one(r#"{ kind = "pcie", gen = 3, lanes = "x8" }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus.lanes");
        let e = one(r#"{ kind = "pcie", gen = 3, lane = 8 }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus.lane");
        assert!(e.1.contains("unknown field `lane`"), "{}", e.1);
        let e = one(r#"{ kind = "pci", clock = 33 }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus.clock");
        assert!(e.1.contains("missing unit"), "{}", e.1);
        let e = one(r#"{ kind = "pcx" }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus.kind");
        assert!(e.1.contains("unknown variant `pcx`"), "{}", e.1);
        let e = one(r#"{ kind = "ideal", lanes = 4 }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus.lanes");
        assert!(e.1.contains("takes no other fields"), "{}", e.1);
    }

    #[test]
    fn knobs_of_another_kind_are_rejected_wherever_kind_is() {
        let e = one(r#"{ kind = "pci", lanes = 4 }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus.lanes");
        assert!(e.1.contains("not a knob of kind \"pci\""), "{}", e.1);
        // `kind` after the stray knob: the error sits on `kind`.
        let e = one(r#"{ width_bits = 64, kind = "pcie", gen = 1, lanes = 1 }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus.kind");
        assert!(e.1.contains("`width_bits` is not a knob"), "{}", e.1);
        // PCI-X is always 64 bits wide.
        assert_eq!(one(r#"{ kind = "pci-x", width_bits = 64 }"#).unwrap_err().0, "hosts[0].bus.width_bits");
    }

    #[test]
    fn missing_kind_gen_or_lanes_is_an_error_at_the_bus() {
        let e = one(r#"{ gen = 3 }"#).unwrap_err();
        assert_eq!(e.0, "hosts[0].bus");
        assert!(e.1.contains("missing field `kind`"), "{}", e.1);
        let e = one(r#"{ kind = "pcie", lanes = 4 }"#).unwrap_err();
        assert!(e.1.contains("missing field `gen`"), "{}", e.1);
        let e = one(r#"{ kind = "pcie", gen = 4 }"#).unwrap_err();
        assert!(e.1.contains("missing field `lanes`"), "{}", e.1);
    }

    #[test]
    fn validate_names_the_field_and_the_allowed_range() {
        assert_eq!(invalid(BusConfig::pcie(3, 3)), "hosts[0].bus.lanes: must be 1, 2, 4, 8 or 16, got 3");
        assert_eq!(invalid(BusConfig::pcie(6, 8)), "hosts[0].bus.gen: must be 1 to 5, got 6");
        assert_eq!(invalid(BusConfig::pcie(0, 8)), "hosts[0].bus.gen: must be 1 to 5, got 0");
        let BusConfig::Pci { clock, max_burst, overhead_cycles, read_latency_cycles, .. } = BusConfig::pci_32_33()
        else {
            panic!()
        };
        let pci = |width_bits, clock, max_burst| BusConfig::Pci {
            width_bits,
            clock,
            max_burst,
            overhead_cycles,
            read_latency_cycles,
        };
        assert_eq!(invalid(pci(16, clock, max_burst)), "hosts[0].bus.width_bits: must be 32 or 64, got 16");
        assert!(invalid(pci(32, Frequency(133_000_000), max_burst)).starts_with("hosts[0].bus.clock: must be 25MHz"));
        assert!(invalid(pci(64, clock, Size(36))).starts_with("hosts[0].bus.max_burst: must be a multiple"));
        let mut bus = BusConfig::pcie(3, 8);
        if let BusConfig::Pcie { max_payload, .. } = &mut bus {
            *max_payload = Size(384);
        }
        assert!(invalid(bus).starts_with("hosts[0].bus.max_payload: must be a power of two"));
        let mut bus = BusConfig::pcie(3, 8);
        if let BusConfig::Pcie { completion_payload, .. } = &mut bus {
            *completion_payload = Size(512);
        }
        assert!(invalid(bus).starts_with("hosts[0].bus.completion_payload:"));
    }

    #[test]
    fn serialises_resolved_with_the_kind_tag() {
        let json = serde_json::to_value(BusConfig::pcie(4, 16)).unwrap();
        assert_eq!(json["kind"], "pcie");
        assert_eq!(json["max_payload"], "256B");
        assert_eq!(json["read_latency"], "500ns");
        assert_eq!(serde_json::to_value(BusConfig::pci_x_133()).unwrap()["kind"], "pci-x");
        assert_eq!(serde_json::to_value(BusConfig::Ideal).unwrap(), serde_json::json!({ "kind": "ideal" }));
        // Round trip through the serialised form.
        let back: BusConfig = serde_json::from_value(serde_json::to_value(BusConfig::pci_64_66()).unwrap()).unwrap();
        assert_eq!(back, BusConfig::pci_64_66());
    }
}
