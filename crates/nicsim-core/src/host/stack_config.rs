//! The settings a host's stack is built from, as a scenario gives them:
//! TCP (buffers, Nagle, delayed and coalesced ACKs, congestion control,
//! MSS clamp, timestamps) and UDP (buffers). `config` re-exports these
//! types; the scenario's `hosts[i].tcp` and `hosts[i].udp` tables are them.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::engine::units::{Duration, Size};

/// What one host's stack is built from.
#[derive(Debug, Clone)]
pub struct StackConfig {
    /// The host's name.
    pub name: String,
    /// Its IPv4 address.
    pub ip: Ipv4Addr,
    /// Its prefix length.
    pub prefix: u8,
    /// TCP settings.
    pub tcp: TcpConfig,
    /// UDP settings.
    pub udp: UdpConfig,
}

/// Congestion control algorithm (smoltcp's implementations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// No congestion control: send up to the receiver's window.
    None,
    /// TCP Reno (RFC 5681).
    Reno,
    /// CUBIC (RFC 8312).
    Cubic,
}

/// Delayed-ACK policy: a delay such as `"10ms"`, or `"off"` to ACK every segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedAck {
    /// ACK immediately.
    Off,
    /// Hold an ACK up to this long (smoltcp still ACKs at once after more than one MSS).
    Delay(Duration),
}

impl Serialize for DelayedAck {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DelayedAck::Off => s.serialize_str("off"),
            DelayedAck::Delay(d) => d.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for DelayedAck {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "off" {
            Ok(DelayedAck::Off)
        } else {
            text.parse::<Duration>()
                .map(DelayedAck::Delay)
                .map_err(|e| serde::de::Error::custom(format!("{e} (or \"off\")")))
        }
    }
}

/// Nagle's algorithm: `false` (off, `TCP_NODELAY`), `true` or `"classic"`
/// (RFC 896 as smoltcp has it: a segment shorter than the MSS waits while
/// any data is unacknowledged), or `"minshall"` (Linux's: it waits only
/// while an earlier short segment is unacknowledged; `host::minshall`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nagle {
    /// Send every segment at once.
    Off,
    /// Hold a short segment while any data is in flight.
    Classic,
    /// Hold a short segment while an earlier short one is in flight.
    Minshall,
}

impl Serialize for Nagle {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Nagle::Off => s.serialize_bool(false),
            Nagle::Classic => s.serialize_bool(true),
            Nagle::Minshall => s.serialize_str("minshall"),
        }
    }
}

impl<'de> Deserialize<'de> for Nagle {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Nagle;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false, \"classic\" or \"minshall\"")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Nagle, E> {
                Ok(if v { Nagle::Classic } else { Nagle::Off })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Nagle, E> {
                match v {
                    "classic" => Ok(Nagle::Classic),
                    "minshall" => Ok(Nagle::Minshall),
                    _ => Err(E::custom(format!("must be true, false, \"classic\" or \"minshall\", got \"{v}\""))),
                }
            }
        }
        d.deserialize_any(Visit)
    }
}

/// TCP socket knobs.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Receive buffer; bounds the advertised window (scaled beyond 64 KiB).
    #[serde(default = "default_tcp_buffer")]
    pub rx_buffer: Size,
    /// Send buffer.
    #[serde(default = "default_tcp_buffer")]
    pub tx_buffer: Size,
    /// Nagle's algorithm: `true` (classic), `false` or `"minshall"` (Linux's variant).
    #[serde(default = "default_nagle")]
    pub nagle: Nagle,
    /// Delayed-ACK timer (smoltcp's default is 10 ms); `"off"` ACKs every segment.
    #[serde(default = "default_delayed_ack")]
    pub delayed_ack: DelayedAck,
    /// Linux quick-ACK mode: the first this many data segments a connection
    /// receives are ACKed at once (Linux `TCP_MAX_QUICKACKS` = 16); 0 turns it off.
    #[serde(default = "default_quickack")]
    pub quickack_segments: u32,
    /// Congestion control: `none`, `reno` or `cubic`.
    #[serde(default = "default_cc")]
    pub congestion_control: CongestionControl,
    /// RFC 7323 timestamps option (12 bytes per segment).
    #[serde(default = "yes")]
    pub timestamps: bool,
    /// Maximum segment size; caps the MTU the stack uses at `mss` + 40 bytes.
    #[serde(default)]
    pub mss: Option<Size>,
    /// ACK policy for a coalesced segment (LRO/GRO merged several into one):
    /// `linux` ACKs it at once when it carries two or more segments, as
    /// Linux does when more than one full-sized segment arrived
    /// (`__tcp_ack_snd_check`); `delay` leaves it to the delayed-ACK timer
    /// like any segment (smoltcp alone: the first frame after an ACK waits).
    #[serde(default)]
    pub coalesced_ack: CoalescedAck,
    /// When a writer that found the send buffer full makes its next call:
    /// `any` as soon as any room frees; `third` once a third of the buffer
    /// is free, as a Linux writer blocked in `sk_stream_wait_memory` is
    /// woken by `sk_stream_write_space` (until it is full, a write takes
    /// whatever room there is).
    #[serde(default)]
    pub write_wakeup: WriteWakeup,
}

/// When a writer blocked on a full send buffer resumes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteWakeup {
    /// As soon as any room frees.
    #[default]
    Any,
    /// Once a third of the buffer is free.
    Third,
}

/// How a receiver ACKs a segment that stands for several (LRO/GRO).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CoalescedAck {
    /// ACK at once when the segment carries two or more merged segments.
    #[default]
    Linux,
    /// Treat it as one segment: the delayed-ACK timer decides.
    Delay,
}

fn default_tcp_buffer() -> Size {
    Size(256 * 1024)
}
fn default_nagle() -> Nagle {
    Nagle::Classic
}

fn default_delayed_ack() -> DelayedAck {
    DelayedAck::Delay(Duration(10_000_000_000))
}
fn default_quickack() -> u32 {
    16
}
fn default_cc() -> CongestionControl {
    CongestionControl::Reno
}
fn yes() -> bool {
    true
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            rx_buffer: default_tcp_buffer(),
            tx_buffer: default_tcp_buffer(),
            nagle: Nagle::Classic,
            delayed_ack: default_delayed_ack(),
            quickack_segments: default_quickack(),
            congestion_control: default_cc(),
            timestamps: true,
            mss: None,
            coalesced_ack: CoalescedAck::default(),
            write_wakeup: WriteWakeup::default(),
        }
    }
}

/// UDP socket buffers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UdpConfig {
    /// Receive buffer (payload bytes).
    #[serde(default = "default_udp_buffer")]
    pub rx_buffer: Size,
    /// Send buffer (payload bytes).
    #[serde(default = "default_udp_buffer")]
    pub tx_buffer: Size,
}

fn default_udp_buffer() -> Size {
    Size(256 * 1024)
}

impl Default for UdpConfig {
    fn default() -> Self {
        UdpConfig { rx_buffer: default_udp_buffer(), tx_buffer: default_udp_buffer() }
    }
}
