//! A simulated host: one smoltcp [`Interface`] on a simulated
//! [`phy::Device`], its sockets, and the knobs of its TCP/UDP stack.
//!
//! For now every host is *ideal*: the stack costs no simulated time, so a
//! frame handed to the device is on the link's queue at the instant the
//! stack produced it. The seam for the timing models (CPU, memory, bus, NIC)
//! is [`SimDevice`]: frames cross it in both directions, and the simulation
//! decides when they move. Checksums are computed in software (smoltcp's
//! default; with TSO the NIC fills the TCP sum), so every frame on the wire
//! is valid. They are verified in software too, except on hosts whose frames
//! cannot arrive damaged, where the check could never fail (see [`Host::new`]).

pub mod autosize;
pub mod cpu;
pub mod cpu_params;
pub mod driver;
pub mod minshall;
pub mod nic_params;
pub mod qdisc;
pub mod stack_config;
pub mod timing;
pub mod window;

use std::cell::Cell;
use std::collections::VecDeque;
use std::net::Ipv4Addr;

use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, Checksum, DeviceCapabilities, Medium};
use smoltcp::socket::{tcp, udp};
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpCidr, Ipv4Cidr};

use crate::engine::rng::component_u64;
use crate::engine::Time;
use stack_config::{CoalescedAck, CongestionControl, DelayedAck, Nagle, StackConfig, WriteWakeup};

thread_local! {
    /// The simulated time in milliseconds, read by the TCP timestamp
    /// generator (smoltcp takes a plain `fn() -> u32`, not a closure).
    static TSVAL_CLOCK: Cell<u32> = const { Cell::new(0) };
}

/// RFC 7323 TSval: a 1 kHz clock (like Linux's `tcp_time_stamp`) that starts at 1.
fn tsval() -> u32 {
    TSVAL_CLOCK.with(Cell::get)
}

fn set_tsval_clock(now: Time) {
    TSVAL_CLOCK.with(|c| c.set((now.ps() / crate::engine::time::PS_PER_MS) as u32 + 1));
}

/// The simulated network device under smoltcp: frames queue here between
/// the stack and the link.
#[derive(Debug, Default)]
pub struct SimDevice {
    /// Ethernet MTU (IP MTU + 14-byte header) advertised to smoltcp.
    mtu: usize,
    /// Frames received from the wire, waiting for the stack.
    pub rx: VecDeque<Vec<u8>>,
    /// Frames the stack emitted during the current poll.
    pub tx: Vec<TxFrame>,
    /// Largest TCP super-segment the NIC segments itself (TSO), if any.
    tso: Option<usize>,
    /// The NIC fills the TCP checksums of sent frames.
    tcp_checksum_to_nic: bool,
    /// Frames the stack may still emit in this poll (the link's free queue slots).
    pub tx_credit: usize,
    /// Set when the stack wanted to send but had no credit.
    pub tx_blocked: bool,
    /// The stack leaves received frames' checksums unchecked (see [`Host::new`]).
    skip_rx_checksums: bool,
}

/// What a host's stack leaves to its NIC's transmit engine
/// ([`crate::nic::offload::TxOffload::stack`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackOffloads {
    /// The NIC cuts TCP super-segments of up to 64 KiB (TSO).
    pub segmentation: bool,
    /// The NIC fills the TCP checksum of every frame sent.
    pub tcp_checksum: bool,
}

/// A frame the stack emitted.
#[derive(Debug)]
pub struct TxFrame {
    /// The bytes (with TSO, a super-segment whose TCP checksum is left to the NIC).
    pub bytes: Vec<u8>,
    /// With TSO: the MSS the NIC must cut this frame to.
    pub tso_mss: Option<u16>,
    /// The core whose send job handed it to the driver (set when that job
    /// ends): with `nic.xps` its completion is that core's to clean.
    pub core: usize,
}

/// Receive token: owns one frame.
pub struct RxToken(Vec<u8>);

/// Transmit token: appends one frame to the device's outbox.
pub struct TxToken<'a> {
    tx: &'a mut Vec<TxFrame>,
    tso_mss: Option<u16>,
}

impl phy::RxToken for RxToken {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for TxToken<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut bytes = vec![0u8; len];
        let r = f(&mut bytes);
        self.tx.push(TxFrame { bytes, tso_mss: self.tso_mss, core: 0 });
        r
    }

    fn set_meta(&mut self, meta: phy::PacketMeta) {
        self.tso_mss = meta.segmentation_offload_size.map(|m| m.get());
    }
}

impl phy::Device for SimDevice {
    type RxToken<'a> = RxToken;
    type TxToken<'a> = TxToken<'a>;

    fn receive(&mut self, _now: smoltcp::time::Instant) -> Option<(RxToken, TxToken<'_>)> {
        // A reply sent from the receive path (ARP, RST) bypasses the credit
        // check; if the queue is full the link counts it as a drop.
        let frame = self.rx.pop_front()?;
        Some((RxToken(frame), TxToken { tx: &mut self.tx, tso_mss: None }))
    }

    fn transmit(&mut self, _now: smoltcp::time::Instant) -> Option<TxToken<'_>> {
        if self.tx_credit == 0 {
            self.tx_blocked = true;
            return None;
        }
        self.tx_credit -= 1;
        Some(TxToken { tx: &mut self.tx, tso_mss: None })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = self.mtu;
        if let Some(max) = self.tso {
            caps.segmentation.tcpv4 = std::num::NonZeroUsize::new(max);
        }
        if self.tcp_checksum_to_nic {
            caps.checksum = offloaded_checksums();
        }
        if self.skip_rx_checksums {
            let c = &mut caps.checksum;
            for sum in [&mut c.ipv4, &mut c.tcp, &mut c.udp, &mut c.icmpv4] {
                *sum = match *sum {
                    Checksum::Both | Checksum::Tx => Checksum::Tx,
                    Checksum::Rx | Checksum::None => Checksum::None,
                };
            }
        }
        caps
    }
}

impl SimDevice {
    /// The stack leaves received frames' checksums unchecked: a frame built
    /// from received ones may leave its TCP checksum unfilled.
    pub fn skips_rx_checksums(&self) -> bool {
        self.skip_rx_checksums
    }
}

/// A TCP socket as the socket lock tells sockets apart: the peer's IPv4
/// address and port, and the local port.
pub type SocketKey = ([u8; 4], u16, u16);

/// The socket a received TCP segment is for ([`Host::socket_key`]), if
/// `frame` is an unfragmented TCP/IPv4 segment.
pub fn segment_socket(frame: &[u8]) -> Option<SocketKey> {
    crate::probe::wire::TcpView::parse(frame).map(|v| (v.flow.0, v.flow.1, v.flow.3))
}

/// Whether a frame of outgoing TCP `flow` (source and destination address
/// and port, as [`crate::probe::wire::TcpView`] has them) comes from socket
/// `sock`.
pub fn sends(sock: SocketKey, flow: &crate::probe::wire::FlowKey) -> bool {
    flow.1 == sock.2 && flow.2 == sock.0 && flow.3 == sock.1
}

/// Per-host counters.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HostStats {
    /// Frames the stack emitted.
    pub tx_frames: u64,
    /// Frames handed to the stack.
    pub rx_frames: u64,
    /// Stack polls.
    pub polls: u64,
}

/// One host: stack, sockets, device.
pub struct Host {
    /// Name from the scenario.
    pub name: String,
    /// IPv4 address.
    pub ip: Ipv4Addr,
    /// MAC address (locally administered, 02:00:00:00:00:index+1).
    pub mac: EthernetAddress,
    /// The smoltcp interface.
    pub iface: Interface,
    /// Its sockets.
    pub sockets: SocketSet<'static>,
    /// The simulated device.
    pub dev: SimDevice,
    cfg: StackConfig,
    /// TCP sockets and the quick-ACK segments each has left.
    tcp_sockets: Vec<(SocketHandle, u32)>,
    /// Every socket has used up its quick ACKs and has its delayed-ACK
    /// time back: quick-ACK handling has nothing left to do until a socket
    /// is added.
    quickack_settled: bool,
    /// Local ports that received a coalesced segment of two or more
    /// segments since the last poll (ACKed at once under `coalesced_ack = "linux"`).
    ack_now: Vec<u16>,
    /// TCP sockets under Minshall's rule (`tcp.nagle = "minshall"`): each
    /// with its local and remote ports once connected, and its state.
    minshall: Vec<minshall::Tracked>,
    /// Counters.
    pub stats: HostStats,
}

impl Host {
    /// Build host `index` of a validated scenario on a link with IP MTU
    /// `mtu`; `nic`: what the stack leaves to the NIC's transmit engine.
    ///
    /// `pristine`: frames can only reach this host exactly as another stack
    /// emitted them, or as a coalescing engine merged such frames (no link
    /// damages them, no driver rebuilds them, no capture is replayed). The stack then leaves the IP, TCP and UDP
    /// checksums of received frames unchecked, as a NIC with receive
    /// checksum offload spares it: the check could never fail, so results
    /// are unchanged, and it was a sixth of a 100 Gb/s jumbo-frame run.
    /// Debug builds (the tests) check everywhere, so a frame an engine got
    /// wrong still shows.
    pub fn new(
        cfg: &StackConfig,
        index: usize,
        link_mtu: usize,
        seed: u64,
        nic: StackOffloads,
        pristine: bool,
    ) -> Host {
        let (ip, prefix) = (cfg.ip, cfg.prefix);
        let mac = Host::mac_of(index);
        let ip_mtu = match cfg.tcp.mss {
            Some(mss) => link_mtu.min(mss.0 as usize + 40),
            None => link_mtu,
        };
        let mtu = ip_mtu + crate::link::ETH_HEADER as usize;
        // 64 KiB of IP packet plus the Ethernet header: the largest TSO frame.
        let tso = nic.segmentation.then_some(65_535 + crate::link::ETH_HEADER as usize);
        let skip_rx_checksums = pristine && !cfg!(debug_assertions);
        let mut dev =
            SimDevice { mtu, tso, tcp_checksum_to_nic: nic.tcp_checksum, skip_rx_checksums, ..Default::default() };
        let mut config = Config::new(HardwareAddress::Ethernet(mac));
        config.random_seed = component_u64(seed, &format!("hosts.{}/stack", cfg.name));
        let mut iface = Interface::new(config, &mut dev, Time::ZERO.to_smoltcp());
        iface.update_ip_addrs(|addrs| {
            addrs.push(IpCidr::Ipv4(Ipv4Cidr::new(ip, prefix))).expect("one address fits");
        });
        Host {
            name: cfg.name.clone(),
            ip,
            mac,
            iface,
            sockets: SocketSet::new(Vec::new()),
            dev,
            cfg: cfg.clone(),
            tcp_sockets: Vec::new(),
            quickack_settled: false,
            ack_now: Vec::new(),
            minshall: Vec::new(),
            stats: HostStats::default(),
        }
    }

    /// Fill the neighbour (ARP) cache with `peers` (address, MAC) before
    /// the run starts, as a host that has talked to them before knows them
    /// (`run.arp = "warm"`). Each is taken as an ARP reply handed straight to
    /// the stack, off the wire and uncounted; smoltcp keeps an entry for a
    /// minute (`ENTRY_LIFETIME`) and drops peers outside the host's subnet.
    pub fn learn_neighbours(&mut self, peers: &[(Ipv4Addr, EthernetAddress)]) {
        use smoltcp::wire::{ArpOperation, ArpPacket, ArpRepr, EthernetFrame, EthernetProtocol, EthernetRepr};
        for &(ip, mac) in peers.iter().filter(|(ip, _)| *ip != self.ip) {
            let arp = ArpRepr::EthernetIpv4 {
                operation: ArpOperation::Reply,
                source_hardware_addr: mac,
                source_protocol_addr: ip,
                target_hardware_addr: self.mac,
                target_protocol_addr: self.ip,
            };
            let eth = EthernetRepr { src_addr: mac, dst_addr: self.mac, ethertype: EthernetProtocol::Arp };
            let mut bytes = vec![0u8; eth.buffer_len() + arp.buffer_len()];
            let mut frame = EthernetFrame::new_unchecked(&mut bytes[..]);
            eth.emit(&mut frame);
            arp.emit(&mut ArpPacket::new_unchecked(frame.payload_mut()));
            self.dev.rx.push_back(bytes);
        }
        self.iface.poll(Time::ZERO.to_smoltcp(), &mut self.dev, &mut self.sockets);
        debug_assert!(self.dev.tx.is_empty(), "an ARP reply is answered by nothing");
    }

    /// The MAC address of host `index`.
    pub fn mac_of(index: usize) -> EthernetAddress {
        EthernetAddress([0x02, 0, 0, 0, (index >> 8) as u8, index as u8 + 1])
    }

    /// Add a TCP socket configured from the host's `tcp` knobs.
    pub fn add_tcp_socket(&mut self) -> SocketHandle {
        let t = &self.cfg.tcp;
        let rx = tcp::SocketBuffer::new(vec![0u8; t.rx_buffer.0 as usize]);
        let tx = tcp::SocketBuffer::new(vec![0u8; t.tx_buffer.0 as usize]);
        let mut s = tcp::Socket::new(rx, tx);
        // Minshall's rule starts with nothing short in flight: nothing held.
        s.set_nagle_enabled(t.nagle == Nagle::Classic);
        s.set_ack_delay(match t.delayed_ack {
            DelayedAck::Off => None,
            DelayedAck::Delay(d) => Some(d.dur().to_smoltcp()),
        });
        s.set_congestion_control(match t.congestion_control {
            CongestionControl::None => tcp::CongestionControl::None,
            CongestionControl::Reno => tcp::CongestionControl::Reno,
            CongestionControl::Cubic => tcp::CongestionControl::Cubic,
        });
        if t.timestamps {
            s.set_tsval_generator(Some(tsval));
        }
        let minshall = t.nagle == Nagle::Minshall;
        let handle = self.sockets.add(s);
        self.tcp_sockets.push((handle, t.quickack_segments));
        self.quickack_settled = false;
        if minshall {
            self.minshall.push((handle, None, minshall::Minshall::default()));
        }
        handle
    }

    /// Turn Nagle's algorithm off for one socket, whatever `tcp.nagle` says
    /// (an application's `TCP_NODELAY`).
    pub fn set_nodelay(&mut self, handle: SocketHandle) {
        self.sockets.get_mut::<tcp::Socket>(handle).set_nagle_enabled(false);
        self.minshall.retain(|(h, _, _)| *h != handle);
    }

    /// When a writer blocked on a full send buffer resumes (`tcp.write_wakeup`).
    pub fn write_wakeup(&self) -> WriteWakeup {
        self.cfg.tcp.write_wakeup
    }

    /// Remove a TCP socket the application is finished with.
    pub fn remove_tcp_socket(&mut self, handle: SocketHandle) {
        self.tcp_sockets.retain(|(h, _)| *h != handle);
        self.minshall.retain(|(h, _, _)| *h != handle);
        self.sockets.remove(handle);
    }

    /// Add a UDP socket sized from the host's `udp` knobs.
    pub fn add_udp_socket(&mut self) -> SocketHandle {
        let u = &self.cfg.udp;
        let meta = |bytes: u64| vec![udp::PacketMetadata::EMPTY; (bytes as usize / 64).max(16)];
        let rx = udp::PacketBuffer::new(meta(u.rx_buffer.0), vec![0u8; u.rx_buffer.0 as usize]);
        let tx = udp::PacketBuffer::new(meta(u.tx_buffer.0), vec![0u8; u.tx_buffer.0 as usize]);
        self.sockets.add(udp::Socket::new(rx, tx))
    }

    /// Run the stack at `now` (ingress, then egress) with `credit` frames of
    /// transmit room. Emitted frames are left in `self.dev.tx`.
    pub fn poll(&mut self, now: Time, credit: usize) {
        set_tsval_clock(now);
        self.stats.polls += 1;
        self.stats.rx_frames += self.dev.rx.len() as u64;
        self.dev.tx_credit = credit;
        self.dev.tx_blocked = false;
        self.quickack();
        let held = self.ack_coalesced();
        let before = self.dev.tx.len();
        if !self.minshall.is_empty() {
            self.minshall_before();
        }
        self.iface.poll(now.to_smoltcp(), &mut self.dev, &mut self.sockets);
        if !self.minshall.is_empty() {
            self.minshall_after(before);
        }
        if self.cfg.tcp.rx_buffer.0 > 65_535 {
            // A scaled window: never let the advertised edge retreat (see `window`).
            let summed = self.dev.tso.is_none();
            for f in &mut self.dev.tx[before..] {
                window::lower_window(&mut f.bytes, summed);
            }
        }
        for (handle, delay) in held {
            self.sockets.get_mut::<tcp::Socket>(handle).set_ack_delay(delay);
        }
        self.stats.tx_frames += self.dev.tx.len() as u64;
    }

    /// Hand a received frame to the stack (taken at the next poll);
    /// `segments`: how many TCP segments a coalescing engine merged into it
    /// (1: as it came off the wire).
    pub fn receive(&mut self, frame: Vec<u8>, segments: u32) {
        if segments >= 2 && self.cfg.tcp.coalesced_ack == CoalescedAck::Linux {
            if let Some(port) = tcp_data_port(&frame) {
                if !self.ack_now.contains(&port) {
                    self.ack_now.push(port);
                }
            }
        }
        self.dev.rx.push_back(frame);
    }

    /// Linux's receiver ACKs at once when more than one full-sized segment
    /// arrived; a coalesced segment stands for several, so the sockets it
    /// is for ACK in this poll without waiting for the delayed-ACK timer.
    /// Returns the sockets whose delay is lifted, with the delay to restore.
    fn ack_coalesced(&mut self) -> Vec<(SocketHandle, Option<smoltcp::time::Duration>)> {
        if self.ack_now.is_empty() {
            return Vec::new();
        }
        let ports = std::mem::take(&mut self.ack_now);
        let mut held = Vec::new();
        for (handle, _) in &self.tcp_sockets {
            let sock = self.sockets.get_mut::<tcp::Socket>(*handle);
            let Some(local) = sock.local_endpoint() else { continue };
            // A zero delay, not none: with no delay smoltcp leaves a timer
            // that an earlier segment started running, and waits for it.
            if ports.contains(&local.port) && sock.ack_delay().is_some_and(|d| d > smoltcp::time::Duration::ZERO) {
                held.push((*handle, sock.ack_delay()));
                sock.set_ack_delay(Some(smoltcp::time::Duration::ZERO));
            }
        }
        held
    }

    /// Minshall's rule before a poll: take the acknowledgements in the
    /// frames about to be processed, then let smoltcp hold a short segment
    /// only on the sockets with a short segment in flight (`minshall`).
    fn minshall_before(&mut self) {
        for (handle, ports, _) in &mut self.minshall {
            if ports.is_none() {
                let sock = self.sockets.get::<tcp::Socket>(*handle);
                if let (Some(l), Some(r)) = (sock.local_endpoint(), sock.remote_endpoint()) {
                    *ports = Some((l.port, r.port));
                }
            }
        }
        for f in &self.dev.rx {
            let Some((src, dst, _, Some(ack), _)) = minshall::segment(f) else { continue };
            if let Some((_, _, m)) = self.minshall.iter_mut().find(|(_, p, _)| *p == Some((dst, src))) {
                m.acked(ack);
            }
        }
        for (handle, _, m) in &self.minshall {
            self.sockets.get_mut::<tcp::Socket>(*handle).set_nagle_enabled(m.hold());
        }
    }

    /// Minshall's rule after a poll: note the short segments the poll sent
    /// (frames from `before` on in the device's transmit queue).
    fn minshall_after(&mut self, before: usize) {
        let mss = self.tcp_mss() as usize;
        for f in &self.dev.tx[before..] {
            let Some((src, dst, seq, _, len)) = minshall::segment(&f.bytes) else { continue };
            if let Some((_, _, m)) = self.minshall.iter_mut().find(|(_, p, _)| *p == Some((src, dst))) {
                m.sent(seq, len, mss);
            }
        }
    }

    /// Linux's quick-ACK mode at connection start (`tcp_incr_quickack` on the
    /// first data received): while a socket has quick ACKs left, this poll
    /// ACKs at once; the data segments waiting for it use them up. smoltcp
    /// alone would hold the ACK of a lone first segment for the full
    /// delayed-ACK time, because its Reno starts with a window of one segment.
    fn quickack(&mut self) {
        if self.quickack_settled {
            return;
        }
        let delay = match self.cfg.tcp.delayed_ack {
            DelayedAck::Off => return,
            DelayedAck::Delay(d) => Some(d.dur().to_smoltcp()),
        };
        // Settled after this pass if every socket starts it with no quick
        // ACK left (each then gets its delay back below).
        let mut settled = true;
        for (handle, left) in &mut self.tcp_sockets {
            let sock = self.sockets.get_mut::<tcp::Socket>(*handle);
            settled &= *left == 0;
            if *left == 0 {
                if sock.ack_delay() != delay {
                    sock.set_ack_delay(delay);
                }
                continue;
            }
            let Some(local) = sock.local_endpoint() else {
                continue;
            };
            let arriving = self.dev.rx.iter().filter(|f| is_tcp_data_to(f, local.port)).count() as u32;
            sock.set_ack_delay(None);
            *left = left.saturating_sub(arriving);
        }
        self.quickack_settled = settled;
    }

    /// Some TCP socket still has quick ACKs left (Linux ACKs every segment
    /// at once then, whatever its window does).
    pub fn quickacking(&self) -> bool {
        !self.quickack_settled
    }

    /// The payload of a full-sized TCP segment this host sends: its IP MTU
    /// less the IP and TCP headers and, with timestamps, their option
    /// (12 bytes).
    pub fn tcp_mss(&self) -> u64 {
        let ip_mtu = self.dev.mtu - crate::link::ETH_HEADER as usize;
        (ip_mtu - 40 - if self.cfg.tcp.timestamps { 12 } else { 0 }) as u64
    }

    /// The socket TCP socket `h` is to the socket lock (`cpu.socket_backlog`):
    /// its peer's IPv4 address and port and its own port, once it has a
    /// peer. A received segment is for it when it comes from that address
    /// and port to that port ([`segment_socket`]).
    pub fn socket_key(&self, h: SocketHandle) -> Option<SocketKey> {
        let s = self.sockets.get::<tcp::Socket>(h);
        let (local, remote) = (s.local_endpoint()?, s.remote_endpoint()?);
        match remote.addr {
            smoltcp::wire::IpAddress::Ipv4(a) => Some((a.octets(), remote.port, local.port)),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The stack hands the NIC super-segments (TSO), so Linux's TCP builds
    /// its send buffers for them (GSO).
    pub fn segmentation(&self) -> bool {
        self.dev.tso.is_some()
    }

    /// When the stack next needs a poll, as smoltcp reports it.
    pub fn poll_at(&mut self, now: Time) -> Option<Time> {
        self.iface.poll_at(now.to_smoltcp(), &self.sockets).map(Time::from_smoltcp)
    }

    /// The IP MTU the stack uses.
    pub fn ip_mtu(&self) -> usize {
        self.dev.mtu - crate::link::ETH_HEADER as usize
    }

    /// The largest Ethernet frame the host sends or takes (IP MTU plus the
    /// 14-byte header), in bytes.
    pub fn max_frame(&self) -> u64 {
        self.dev.mtu as u64
    }

    /// Whether smoltcp still holds fragments of an IP datagram to send (it
    /// then asks to be polled at once, time zero).
    pub fn fragmenting(&mut self, now: Time) -> bool {
        self.iface.poll_at(now.to_smoltcp(), &self.sockets) == Some(smoltcp::time::Instant::ZERO)
    }

    /// Prepare a socket operation at `now` (sets the timestamp clock).
    pub fn enter(&mut self, now: Time) {
        set_tsval_clock(now);
    }
}

/// Whether `frame` is an IPv4 TCP segment with payload for local port `port`.
fn is_tcp_data_to(frame: &[u8], port: u16) -> bool {
    tcp_data_port(frame) == Some(port)
}

/// The destination port of a TCP/IPv4 frame that carries data.
fn tcp_data_port(frame: &[u8]) -> Option<u16> {
    use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(eth.payload()).ok()?;
    if ip.next_header() != IpProtocol::Tcp {
        return None;
    }
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    (!tcp.payload().is_empty()).then(|| tcp.dst_port())
}

/// The checksum capabilities a device with transmit offload advertises:
/// the stack verifies on receive but leaves TCP transmit checksums to the NIC.
pub fn offloaded_checksums() -> smoltcp::phy::ChecksumCapabilities {
    let mut caps = smoltcp::phy::ChecksumCapabilities::default();
    caps.tcp = smoltcp::phy::Checksum::Rx;
    caps
}
