//! VIA-style user-level messaging and the echo workload (the Won study).
//!
//! ```text
//!  client (measured)                                   echo node (ideal)
//!  VipPostSend ─ descriptor ─ doorbell ─ transport ─ driver ─ DMA ─▶ wire ─▶ swap headers
//!  VipPostRecv ◀─ completion ◀─ transport ◀─ driver ◀─ intr ◀─ DMA ◀─ wire ◀─ return frame
//! ```
//!
//! **Wire format.** VIA frames bypass IP: an Ethernet II header with
//! EtherType 0x88B5 (IEEE "local experimental"), then a 20-byte VIA header
//! and up to MTU − 20 bytes of message:
//!
//! ```text
//!  0      2      4          8          12         16         20
//!  | vi   | flags| sequence | message  | offset   | length   | payload ...
//! ```
//! all big-endian; `flags` bit 0 marks a message's last fragment, `sequence`
//! counts frames on the VI, `offset` is the fragment's place in the message
//! and `length` the whole message's size. Tools show the frames as data
//! (tshark: `eth.type == 0x88b5`).
//!
//! **Registered memory.** The application registers its message buffer
//! before the measurement: the pages are pinned and their physical frames
//! recorded ([`Registration`]); the transport translates each page a frame
//! touches. Not modelled: VI connection set-up, protection tags, RDMA,
//! retransmission (the link must be loss-free), flow control beyond one
//! message at a time.
//!
//! **Echo workload.** The client sends a message (UDP `sendto` or
//! `VipPostSend`), the echo node returns every frame with its addresses
//! swapped, and the client receives it (`recvfrom` or the receive
//! completion) and checks every byte against what it sent.

use smoltcp::iface::SocketHandle;
use smoltcp::socket::udp;
use smoltcp::wire::{EthernetAddress, EthernetFrame, EthernetProtocol, IpEndpoint};

use super::pattern::Pattern;
use super::{FlowReport, Op};
use crate::engine::Time;
use crate::host::{Host, TxFrame};

/// The EtherType of VIA frames (IEEE 802 local experimental EtherType 1).
pub const ETHERTYPE: u16 = 0x88B5;
/// Bytes of the VIA header after the Ethernet header.
pub const HEADER_LEN: usize = 20;
/// Largest VIA message (one registered buffer; the scenario's limit).
pub use crate::config::VIA_MAX_MESSAGE as MAX_MESSAGE;
/// Page size of registered memory (MIPS R4000 under Linux: 4 KiB pages).
pub const PAGE: u64 = 4096;
/// Flag: the frame carries a message's last fragment.
pub const FLAG_LAST: u16 = 1;

mod field {
    use std::ops::Range;
    pub const VI: Range<usize> = 0..2;
    pub const FLAGS: Range<usize> = 2..4;
    pub const SEQ: Range<usize> = 4..8;
    pub const MSG: Range<usize> = 8..12;
    pub const OFFSET: Range<usize> = 12..16;
    pub const LENGTH: Range<usize> = 16..20;
}

/// A view of a VIA header and payload (the bytes after the Ethernet header).
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// A view of `buffer`, checked to hold a whole header.
    pub fn new_checked(buffer: T) -> Result<Self, String> {
        let len = buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(format!(
                "a VIA frame of {len} bytes after Ethernet is shorter than its {HEADER_LEN}-byte header"
            ));
        }
        Ok(Packet { buffer })
    }

    fn u16_at(&self, r: std::ops::Range<usize>) -> u16 {
        u16::from_be_bytes(self.buffer.as_ref()[r].try_into().expect("2 bytes"))
    }

    fn u32_at(&self, r: std::ops::Range<usize>) -> u32 {
        u32::from_be_bytes(self.buffer.as_ref()[r].try_into().expect("4 bytes"))
    }

    /// VI number.
    pub fn vi(&self) -> u16 {
        self.u16_at(field::VI)
    }
    /// Flags ([`FLAG_LAST`]).
    pub fn flags(&self) -> u16 {
        self.u16_at(field::FLAGS)
    }
    /// Frame sequence number on the VI.
    pub fn seq(&self) -> u32 {
        self.u32_at(field::SEQ)
    }
    /// Message id.
    pub fn msg(&self) -> u32 {
        self.u32_at(field::MSG)
    }
    /// Offset of this fragment in the message.
    pub fn offset(&self) -> u32 {
        self.u32_at(field::OFFSET)
    }
    /// Length of the whole message.
    pub fn length(&self) -> u32 {
        self.u32_at(field::LENGTH)
    }
    /// The fragment's bytes (an Ethernet pad, if any, is cut off).
    pub fn payload(&self) -> &[u8] {
        let rest = &self.buffer.as_ref()[HEADER_LEN..];
        let want = (self.length().saturating_sub(self.offset()) as usize).min(rest.len());
        &rest[..want]
    }
}

/// A VIA header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    /// VI number.
    pub vi: u16,
    /// Flags.
    pub flags: u16,
    /// Frame sequence number on the VI.
    pub seq: u32,
    /// Message id.
    pub msg: u32,
    /// Offset of the fragment in the message.
    pub offset: u32,
    /// Message length.
    pub length: u32,
}

impl Repr {
    /// The header of `p`.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Repr {
        Repr { vi: p.vi(), flags: p.flags(), seq: p.seq(), msg: p.msg(), offset: p.offset(), length: p.length() }
    }

    /// Write the header into the first [`HEADER_LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::VI].copy_from_slice(&self.vi.to_be_bytes());
        buf[field::FLAGS].copy_from_slice(&self.flags.to_be_bytes());
        buf[field::SEQ].copy_from_slice(&self.seq.to_be_bytes());
        buf[field::MSG].copy_from_slice(&self.msg.to_be_bytes());
        buf[field::OFFSET].copy_from_slice(&self.offset.to_be_bytes());
        buf[field::LENGTH].copy_from_slice(&self.length.to_be_bytes());
    }
}

/// Whether `frame` is an Ethernet frame carrying VIA.
pub fn is_via(frame: &[u8]) -> bool {
    EthernetFrame::new_checked(frame).is_ok_and(|e| e.ethertype() == EthernetProtocol::Unknown(ETHERTYPE))
}

/// What the cost model needs of a VIA frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameInfo {
    /// Message bytes in the frame.
    pub payload: u64,
    /// Pages of registered memory the fragment touches.
    pub pages: u64,
    /// The message takes more than one frame.
    pub fragmented: bool,
}

/// The cost-relevant facts of VIA frame `frame` (None: not VIA or malformed).
pub fn frame_info(frame: &[u8]) -> Option<FrameInfo> {
    if !is_via(frame) {
        return None;
    }
    let eth = EthernetFrame::new_checked(frame).ok()?;
    let p = Packet::new_checked(eth.payload()).ok()?;
    let payload = p.payload().len() as u64;
    let offset = u64::from(p.offset());
    Some(FrameInfo {
        payload,
        pages: pages_touched(offset, payload),
        fragmented: !(offset == 0 && p.flags() & FLAG_LAST != 0),
    })
}

/// Pages a span of `len` bytes at `offset` in a page-aligned buffer touches.
pub fn pages_touched(offset: u64, len: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    (offset + len - 1) / PAGE - offset / PAGE + 1
}

/// A registered (pinned) buffer: its virtual base and the physical frame of
/// each page, recorded once before the measurement.
#[derive(Debug, Clone)]
pub struct Registration {
    base: u64,
    frames: Vec<u64>,
}

impl Registration {
    /// Register `len` bytes at page-aligned virtual address `base`. The
    /// physical frames are scattered, as pinned user pages are.
    pub fn new(base: u64, len: u64) -> Registration {
        assert_eq!(base % PAGE, 0, "registered buffers are page-aligned");
        let n = len.div_ceil(PAGE).max(1);
        Registration { base, frames: (0..n).map(|i| 0x4000 + i * 37 % 1024 + i * 1024).collect() }
    }

    /// Physical address of virtual address `va`, if registered.
    pub fn translate(&self, va: u64) -> Option<u64> {
        let off = va.checked_sub(self.base)?;
        let frame = self.frames.get((off / PAGE) as usize)?;
        Some(frame * PAGE + off % PAGE)
    }

    /// Physical addresses of the pages `len` bytes at buffer offset `offset` touch.
    pub fn pages(&self, offset: u64, len: u64) -> Result<Vec<u64>, String> {
        (0..pages_touched(offset, len))
            .map(|i| {
                let va = self.base + (offset / PAGE + i) * PAGE;
                self.translate(va).ok_or_else(|| format!("address {va:#x} is not in registered memory"))
            })
            .collect()
    }
}

/// One end of a VI: addresses, sequence numbers, registered memory and the
/// message being reassembled.
#[derive(Debug)]
pub struct Vi {
    number: u16,
    local: EthernetAddress,
    remote: EthernetAddress,
    /// Largest fragment: MTU less the VIA header.
    fragment: usize,
    tx_seq: u32,
    rx_seq: u32,
    send_buf: Registration,
    recv_buf: Registration,
    /// Message being received: id, bytes, fragments seen.
    rx: Option<(u32, Vec<u8>, Vec<bool>)>,
    /// A whole message, waiting on the receive completion queue.
    ready: Option<Vec<u8>>,
}

impl Vi {
    /// VI `number` from `local` to `remote` on a link of IP MTU `mtu`, with
    /// send and receive buffers of `size` bytes registered.
    pub fn new(number: u16, local: EthernetAddress, remote: EthernetAddress, mtu: usize, size: u64) -> Vi {
        Vi {
            number,
            local,
            remote,
            fragment: mtu - HEADER_LEN,
            tx_seq: 0,
            rx_seq: 0,
            send_buf: Registration::new(0x1000_0000, size),
            recv_buf: Registration::new(0x2000_0000, size),
            rx: None,
            ready: None,
        }
    }

    /// The frames of message `msg` (`data`), fragmented to the MTU; every
    /// page is translated through the send buffer's registration.
    pub fn frames(&mut self, msg: u32, data: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        let total = data.len();
        let mut out = Vec::with_capacity(total.div_ceil(self.fragment).max(1));
        let mut offset = 0;
        loop {
            let len = (total - offset).min(self.fragment);
            self.send_buf.pages(offset as u64, len as u64)?;
            let last = offset + len == total;
            let mut f = vec![0u8; crate::link::ETH_HEADER as usize + HEADER_LEN + len];
            let mut eth = EthernetFrame::new_unchecked(&mut f[..]);
            eth.set_dst_addr(self.remote);
            eth.set_src_addr(self.local);
            eth.set_ethertype(EthernetProtocol::Unknown(ETHERTYPE));
            let repr = Repr {
                vi: self.number,
                flags: if last { FLAG_LAST } else { 0 },
                seq: self.tx_seq,
                msg,
                offset: offset as u32,
                length: total as u32,
            };
            let body = eth.payload_mut();
            repr.emit(body);
            body[HEADER_LEN..].copy_from_slice(&data[offset..offset + len]);
            self.tx_seq = self.tx_seq.wrapping_add(1);
            out.push(f);
            offset += len;
            if last {
                return Ok(out);
            }
        }
    }

    /// Take one arriving frame: check it belongs here and in order, place its
    /// bytes (translating the receive buffer's pages), and complete the message.
    pub fn deliver(&mut self, frame: &[u8]) -> Result<(), String> {
        let eth = EthernetFrame::new_checked(frame).map_err(|e| format!("bad Ethernet frame: {e}"))?;
        let p = Packet::new_checked(eth.payload())?;
        let h = Repr::parse(&p);
        if h.vi != self.number || eth.dst_addr() != self.local {
            return Err(format!("a VIA frame for VI {} at {} reached VI {}", h.vi, eth.dst_addr(), self.number));
        }
        if h.seq != self.rx_seq {
            return Err(format!("VIA frame {} arrived, {} expected (VIA here does not reorder)", h.seq, self.rx_seq));
        }
        self.rx_seq = self.rx_seq.wrapping_add(1);
        let (offset, len, total) = (h.offset as usize, p.payload().len(), h.length as usize);
        if offset + len > total || total as u64 > MAX_MESSAGE {
            return Err(format!("VIA fragment at {offset} of {len} bytes overruns its {total}-byte message"));
        }
        self.recv_buf.pages(offset as u64, len as u64)?;
        let fragments = total.div_ceil(self.fragment).max(1);
        let (id, buf, seen) = self.rx.get_or_insert_with(|| (h.msg, vec![0; total], vec![false; fragments]));
        if *id != h.msg || buf.len() != total {
            return Err(format!("VIA message {} interleaved with message {id}", h.msg));
        }
        let index = offset / self.fragment;
        if offset % self.fragment != 0 || seen[index] {
            return Err(format!("VIA message {} got fragment at offset {offset} twice or misaligned", h.msg));
        }
        seen[index] = true;
        buf[offset..offset + len].copy_from_slice(p.payload());
        if seen.iter().all(|s| *s) {
            let (_, buf, _) = self.rx.take().expect("present");
            if self.ready.replace(buf).is_some() {
                return Err("a VIA message arrived before the previous one was received".into());
            }
        }
        Ok(())
    }
}

/// How the echo client moves its messages.
pub enum Io {
    /// A UDP socket and the echo node's endpoint.
    Udp(SocketHandle, IpEndpoint),
    /// A VI to the echo node.
    Via(Box<Vi>),
}

/// The measured host of the echo workload: one message at a time, sent,
/// echoed, received and checked.
pub struct EchoClient {
    io: Io,
    pattern: Pattern,
    size: u64,
    /// Messages in all (warm-up and measured).
    total: u64,
    /// Leading messages left out of the measurement.
    pub warmup: u64,
    /// Messages echoed back intact.
    pub completed: u64,
    waiting: bool,
    buf: Vec<u8>,
    started: Option<Time>,
    /// First message's start.
    pub first: Option<Time>,
    /// Last message's return.
    pub last: Option<Time>,
    /// Round trip of every message, ps.
    pub latencies: Vec<u64>,
    /// Bytes received and verified.
    pub bytes: u64,
    /// Frames a VIA message took (VIA only; 0 for UDP).
    pub frames_per_message: u64,
}

impl EchoClient {
    /// A client sending `total` messages of `size` bytes (the first `warmup`
    /// are not measured) over `io`; payloads come from pattern stream 0.
    pub fn new(io: Io, seed: u64, size: u64, total: u64, warmup: u64) -> EchoClient {
        EchoClient {
            io,
            pattern: Pattern::new(seed, 0),
            size,
            total,
            warmup,
            completed: 0,
            waiting: false,
            buf: vec![0; size as usize],
            started: None,
            first: None,
            last: None,
            latencies: Vec::new(),
            bytes: 0,
            frames_per_message: 0,
        }
    }

    /// Whether this client speaks VIA.
    pub fn is_via(&self) -> bool {
        matches!(self.io, Io::Via(_))
    }

    /// The next call, or `None` (waiting for the echo, or finished).
    pub fn next_op(&mut self, now: Time, host: &mut Host) -> Option<Op> {
        if self.completed == self.total {
            return None;
        }
        if self.waiting {
            return match &mut self.io {
                Io::Udp(sock, _) => {
                    let sock = *sock;
                    let (data, _) = host.sockets.get_mut::<udp::Socket>(sock).peek().ok()?;
                    Some(Op::RecvFrom { sock, bytes: data.len() as u64 })
                }
                Io::Via(vi) => vi.ready.as_ref().map(|m| Op::ViaRecv { bytes: m.len() as u64 }),
            };
        }
        match &self.io {
            Io::Udp(sock, _) => {
                let s = host.sockets.get::<udp::Socket>(*sock);
                if !super::udp::room(s, self.size) || host.fragmenting(now) {
                    return None;
                }
                self.started = Some(now);
                self.first.get_or_insert(now);
                Some(Op::SendTo { sock: *sock, bytes: self.size })
            }
            Io::Via(_) => {
                self.started = Some(now);
                self.first.get_or_insert(now);
                Some(Op::ViaSend { bytes: self.size })
            }
        }
    }

    /// Carry out a call.
    pub fn perform(&mut self, op: Op, now: Time, host: &mut Host) -> Result<(), String> {
        let n = self.completed;
        match op {
            Op::SendTo { .. } | Op::ViaSend { .. } => {
                self.pattern.fill(n * self.size, &mut self.buf);
                match &mut self.io {
                    Io::Udp(sock, peer) => {
                        let s = host.sockets.get_mut::<udp::Socket>(*sock);
                        s.send_slice(&self.buf, *peer).map_err(|e| format!("UDP send failed: {e}"))?;
                    }
                    Io::Via(vi) => {
                        let frames = vi.frames(n as u32, &self.buf)?;
                        self.frames_per_message = frames.len() as u64;
                        host.dev.tx.extend(frames.into_iter().map(|bytes| TxFrame { bytes, tso_mss: None, core: 0 }));
                    }
                }
                self.waiting = true;
            }
            Op::RecvFrom { .. } | Op::ViaRecv { .. } => {
                let data = match &mut self.io {
                    Io::Udp(sock, _) => {
                        let s = host.sockets.get_mut::<udp::Socket>(*sock);
                        s.recv().map_err(|e| format!("UDP recv failed: {e}"))?.0.to_vec()
                    }
                    Io::Via(vi) => vi.ready.take().ok_or("no VIA message completed")?,
                };
                if data.len() as u64 != self.size {
                    return Err(format!("message {n} came back with {} bytes, {} were sent", data.len(), self.size));
                }
                if let Some(i) = self.pattern.first_mismatch(n * self.size, &data) {
                    return Err(format!("message {n} came back corrupted at byte {i}"));
                }
                self.bytes += data.len() as u64;
                self.waiting = false;
                self.completed += 1;
                let start = self.started.take().expect("a message was sent");
                self.latencies.push(now.since(start).ps());
                self.last = Some(now);
            }
            other => unreachable!("the echo client makes no {other:?}"),
        }
        Ok(())
    }

    /// A VIA frame reached the application's VI.
    pub fn deliver(&mut self, frame: &[u8]) -> Result<(), String> {
        match &mut self.io {
            Io::Via(vi) => vi.deliver(frame),
            Io::Udp(..) => Ok(()),
        }
    }

    /// The message being worked on.
    pub fn current_msg(&self) -> u64 {
        self.completed
    }

    /// Messages done and in all.
    pub fn progress(&self) -> (u64, Option<u64>) {
        (self.completed, Some(self.total))
    }

    /// Whether every message came back.
    pub fn is_done(&self) -> bool {
        self.completed == self.total
    }

    /// What came back.
    pub fn report(&self, from: &str, to: &str) -> FlowReport {
        FlowReport { from: from.into(), to: to.into(), bytes: self.bytes, stream: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 1]);
    const B: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 2]);

    #[test]
    fn header_round_trips_through_literal_bytes() {
        let bytes = [0, 7, 0, 1, 0, 0, 0, 9, 0, 0, 0, 3, 0, 0, 5, 0xc8, 0, 0, 0x10, 0, 0xaa, 0xbb];
        let p = Packet::new_checked(&bytes[..]).unwrap();
        let r = Repr::parse(&p);
        assert_eq!(r, Repr { vi: 7, flags: FLAG_LAST, seq: 9, msg: 3, offset: 1480, length: 4096 });
        assert_eq!(p.payload(), &[0xaa, 0xbb]);
        let mut out = [0u8; HEADER_LEN];
        r.emit(&mut out);
        assert_eq!(out[..], bytes[..HEADER_LEN]);
        assert!(Packet::new_checked(&bytes[..19]).is_err());
    }

    #[test]
    fn a_message_fragments_to_the_mtu_and_reassembles_intact() {
        let data: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut tx = Vi::new(1, A, B, 1500, 4000);
        let mut rx = Vi::new(1, B, A, 1500, 4000);
        let frames = tx.frames(5, &data).unwrap();
        assert_eq!(frames.len(), 3, "4000 B at 1480 B per fragment");
        assert!(frames.iter().all(|f| f.len() <= 14 + 1500 && is_via(f)));
        let carried: u64 = frames.iter().map(|f| frame_info(f).unwrap().payload).sum();
        assert_eq!(carried, 4000);
        for f in &frames {
            rx.deliver(f).unwrap();
        }
        assert_eq!(rx.ready.take().unwrap(), data);
        // What the echo node does: swap the addresses. The frame now goes
        // back to A, so B's VI refuses it.
        let mut back = frames[0].clone();
        crate::probe::wire::swap_headers(&mut back);
        assert!(rx.deliver(&back).is_err(), "a frame to another MAC is refused");
    }

    #[test]
    fn pages_touched_counts_page_crossings() {
        assert_eq!(pages_touched(0, 1), 1);
        assert_eq!(pages_touched(0, 4096), 1);
        assert_eq!(pages_touched(1480, 1480), 1);
        assert_eq!(pages_touched(2960, 1480), 2);
        assert_eq!(pages_touched(100, 0), 0);
        let r = Registration::new(0x1000_0000, 8192);
        assert_eq!(r.pages(4000, 200).unwrap().len(), 2);
        assert!(r.pages(8192, 1).is_err(), "beyond the registered buffer");
    }
}
