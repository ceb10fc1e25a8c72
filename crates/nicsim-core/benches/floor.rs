//! The stack's floor: what bulk TCP costs in smoltcp alone, with no
//! simulator around it (`make bench`, `cargo bench -p nicsim-core --bench
//! floor`).
//!
//! Two smoltcp interfaces, connected once, move 64 MiB of bulk TCP per
//! iteration through in-memory
//! frame queues: no events, no timing models, no links, no payload pattern
//! (the sender writes zeros, the receiver reads into a scratch buffer).
//! What is left is the work every simulated data segment needs from the
//! stack: the socket write's copy into the send buffer, the segment built
//! from it, the segment parsed and copied into the receive buffer, the
//! socket read's copy out, and the segment's share of ACKs both ways. Each
//! frame is a fresh heap buffer, as in the simulator. Received checksums
//! are not verified (as on a pristine release-build host, see
//! docs/models/host.md).
//!
//! Two polling policies:
//! - `per-segment`: the stack is polled once for every frame that arrives
//!   and once after every socket call, which is what nicsim's timed hosts
//!   do (each received frame is its own soft-interrupt job; each socket
//!   call is followed by the stack's reaction to it);
//! - `per-frame`: the same without the poll after each socket call, to
//!   show what that second poll costs;
//! - `batched`: each side takes every frame waiting for it in one poll and
//!   reads or writes once per round, the cheapest way to drive smoltcp.
//!
//! The same per segment with MTU 9000 and 16 MiB buffers gives the floor
//! under the 100 Gb/s target. The figure is time per data segment;
//! docs/performance.md turns it into CPU seconds per simulated second.
//! Nothing is asserted.

use std::collections::VecDeque;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{self, Checksum, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::time::{Duration, Instant};
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr, Ipv4Address};

/// Bytes moved per iteration.
const BYTES: usize = 64 << 20;
/// Socket buffers, as in `scenarios/bench/tcp-10g-mtu1500.toml`.
const BUFFER: usize = 4 << 20;
/// Socket buffers, as in `scenarios/bench/tcp-100g-mtu9000.toml`.
const JUMBO_BUFFER: usize = 16 << 20;
/// Bytes per socket write, as nicsim's bulk workload.
const WRITE: usize = 64 << 10;
/// Ethernet MTU 1500 plus the Ethernet header.
const FRAME_MTU: usize = 1514;
/// Ethernet MTU 9000 plus the Ethernet header.
const JUMBO_FRAME_MTU: usize = 9014;
const PORT: u16 = 5001;

struct Queues {
    rx: VecDeque<Vec<u8>>,
    tx: Vec<Vec<u8>>,
    /// Largest frame, Ethernet header included.
    mtu: usize,
}

struct Rx(Vec<u8>);
struct Tx<'a>(&'a mut Vec<Vec<u8>>);

impl phy::RxToken for Rx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut bytes = vec![0u8; len];
        let r = f(&mut bytes);
        self.0.push(bytes);
        r
    }
}

impl phy::Device for Queues {
    type RxToken<'a> = Rx;
    type TxToken<'a> = Tx<'a>;

    fn receive(&mut self, _: Instant) -> Option<(Rx, Tx<'_>)> {
        let frame = self.rx.pop_front()?;
        Some((Rx(frame), Tx(&mut self.tx)))
    }

    fn transmit(&mut self, _: Instant) -> Option<Tx<'_>> {
        Some(Tx(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = self.mtu;
        caps.checksum.ipv4 = Checksum::Tx;
        caps.checksum.tcp = Checksum::Tx;
        caps
    }
}

struct Stack {
    iface: Interface,
    dev: Queues,
    sockets: SocketSet<'static>,
    socket: SocketHandle,
}

impl Stack {
    fn new(last_octet: u8, mtu: usize, buffer: usize) -> Stack {
        let mut dev = Queues { rx: VecDeque::new(), tx: Vec::new(), mtu };
        let mac = EthernetAddress([0x02, 0, 0, 0, 0, last_octet]);
        let mut iface = Interface::new(Config::new(HardwareAddress::Ethernet(mac)), &mut dev, Instant::ZERO);
        iface.update_ip_addrs(|a| a.push(IpCidr::new(IpAddress::v4(10, 0, 0, last_octet), 24)).unwrap());
        let mut sockets = SocketSet::new(Vec::new());
        let socket =
            tcp::Socket::new(tcp::SocketBuffer::new(vec![0u8; buffer]), tcp::SocketBuffer::new(vec![0u8; buffer]));
        let socket = sockets.add(socket);
        Stack { iface, dev, sockets, socket }
    }

    fn poll(&mut self, now: Instant) {
        self.iface.poll(now, &mut self.dev, &mut self.sockets);
    }

    fn tcp(&mut self) -> &mut tcp::Socket<'static> {
        self.sockets.get_mut::<tcp::Socket>(self.socket)
    }
}

/// How the stacks are driven.
#[derive(Clone, Copy)]
enum Policy {
    PerSegment,
    PerFrame,
    Batched,
}

/// A connected sender `a` and receiver `b`, and how far they have got.
struct Pair {
    a: Stack,
    b: Stack,
    policy: Policy,
    now: Instant,
    zeros: Vec<u8>,
    scratch: Vec<u8>,
}

impl Pair {
    /// A fresh pair with the connection open and its first window's worth
    /// moved (slow start and buffer first-touch done outside the timing).
    fn new(policy: Policy, mtu: usize, buffer: usize) -> Pair {
        let mut a = Stack::new(1, mtu, buffer);
        let mut b = Stack::new(2, mtu, buffer);
        b.tcp().listen(PORT).unwrap();
        let cx = a.iface.context();
        a.sockets.get_mut::<tcp::Socket>(a.socket).connect(cx, (Ipv4Address::new(10, 0, 0, 2), PORT), 49152).unwrap();
        let mut pair = Pair { a, b, policy, now: Instant::ZERO, zeros: vec![0u8; WRITE], scratch: vec![0u8; WRITE] };
        pair.transfer(4 * buffer);
        pair
    }

    /// Move `bytes` more from `a` to `b`; returns the data segments sent.
    fn transfer(&mut self, bytes: usize) -> u64 {
        let Pair { a, b, policy, now, zeros, scratch } = self;
        let (mut sent, mut received, mut segments) = (0usize, 0usize, 0u64);
        while received < bytes {
            // Virtual time only keeps smoltcp's timers sane: a microsecond per round.
            *now += Duration::from_micros(1);
            if sent < bytes && a.tcp().can_send() {
                let n = WRITE.min(bytes - sent);
                sent += a.tcp().send_slice(&zeros[..n]).unwrap();
                if matches!(policy, Policy::PerSegment) {
                    a.poll(*now);
                }
            }
            a.poll(*now);
            let to_b: Vec<Vec<u8>> = std::mem::take(&mut a.dev.tx);
            segments += to_b.iter().filter(|f| f.len() > 66).count() as u64;
            match policy {
                Policy::PerSegment | Policy::PerFrame => {
                    for frame in to_b {
                        b.dev.rx.push_back(frame);
                        b.poll(*now);
                        if b.tcp().can_recv() {
                            received += b.tcp().recv_slice(scratch).unwrap();
                            if matches!(policy, Policy::PerSegment) {
                                b.poll(*now);
                            }
                        }
                    }
                    for ack in std::mem::take(&mut b.dev.tx) {
                        a.dev.rx.push_back(ack);
                        a.poll(*now);
                    }
                }
                Policy::Batched => {
                    b.dev.rx.extend(to_b);
                    b.poll(*now);
                    while b.tcp().can_recv() {
                        received += b.tcp().recv_slice(scratch).unwrap();
                    }
                    a.dev.rx.extend(std::mem::take(&mut b.dev.tx));
                }
            }
        }
        segments
    }
}

fn floor(c: &mut Criterion) {
    let mut group = c.benchmark_group("smoltcp-floor-64MiB");
    group.sample_size(10);
    for (name, policy) in
        [("per-segment", Policy::PerSegment), ("per-frame", Policy::PerFrame), ("batched", Policy::Batched)]
    {
        let mut pair = Pair::new(policy, FRAME_MTU, BUFFER);
        let segments = pair.transfer(BYTES);
        group.throughput(Throughput::Elements(segments));
        group.bench_function(name, |bench| bench.iter(|| pair.transfer(BYTES)));
    }
    group.finish();
    // The floor under the 100 Gb/s MTU 9000 target: jumbo frames, 16 MiB buffers.
    let mut group = c.benchmark_group("smoltcp-floor-64MiB-mtu9000");
    group.sample_size(10);
    let mut pair = Pair::new(Policy::PerSegment, JUMBO_FRAME_MTU, JUMBO_BUFFER);
    let segments = pair.transfer(BYTES);
    group.throughput(Throughput::Elements(segments));
    group.bench_function("per-segment", |bench| bench.iter(|| pair.transfer(BYTES)));
    group.finish();
}

criterion_group!(benches, floor);
criterion_main!(benches);
