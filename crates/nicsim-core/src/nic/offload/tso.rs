//! TCP segmentation offload and transmit checksum offload: the NIC cuts a
//! TCP/IPv4 super-segment (up to 64 KiB from smoltcp's `segmentation-offload`
//! hook) into MSS-sized frames and fills in their checksums.
//!
//! Each output frame copies the Ethernet, IPv4 and TCP headers of the input
//! (options included), then: IP total length and identification (the
//! input's plus the segment index, as Linux GSO does), TCP sequence number
//! advanced by the bytes before it, PSH and FIN only on the last segment,
//! CWR only on the first, and both checksums recomputed. Frames that are not
//! TCP/IPv4 pass through untouched (their checksums were made by the stack).

use std::collections::BTreeMap;

use smoltcp::wire::{IpAddress, Ipv4Packet, TcpPacket};

use super::{Setup, StackOffloads, TxOffload};
use crate::probe::wire::{FlowKey, TcpView};

/// The TSO engine of a host whose NIC segments (`nic.tso`): its stack hands
/// it TCP super-segments with the MSS to cut them to, and leaves every TCP
/// checksum to it.
///
/// It also numbers each flow's IP identifications as Linux's stack does
/// for a connected socket (`ip_select_ident_segs` in `include/net/ip.h`,
/// called by `__ip_queue_xmit` with the super-segment's `gso_segs`): a
/// super-segment takes the flow's next ID and advances it by the segments
/// it becomes, so the IDs on the wire run on without a gap from one
/// super-segment to the next. smoltcp advances its one counter per packet
/// it emits, so its super-segments' IDs would overlap, and a receiver's
/// GRO (which requires incrementing IDs, `inet_gro_receive`) would close
/// its aggregate at every super-segment.
#[derive(Debug, Default)]
pub struct Segmentation {
    /// Each flow's next IP identification (the first is smoltcp's).
    next_id: BTreeMap<FlowKey, u16>,
}

impl Segmentation {
    /// The engine of a host with `nic.tso` on.
    pub fn from_host(host: &Setup) -> Option<Segmentation> {
        host.timing.nic.tso.then(Segmentation::default)
    }

    /// Give TCP/IPv4 `frame`, which becomes `segments` frames, its flow's
    /// next IP identification.
    fn number(&mut self, frame: &mut [u8], segments: usize) {
        let Some(v) = TcpView::parse(frame) else { return };
        let mut ip = Ipv4Packet::new_unchecked(&mut frame[ETH..]);
        let id = *self.next_id.entry(v.flow).or_insert(ip.ident());
        ip.set_ident(id);
        self.next_id.insert(v.flow, id.wrapping_add(segments as u16));
    }
}

impl TxOffload for Segmentation {
    fn stack(&self) -> StackOffloads {
        StackOffloads { segmentation: true, tcp_checksum: true }
    }

    fn wire_frames(&self, frame: &[u8], tso_mss: Option<u16>) -> usize {
        let Some(mss) = tso_mss else { return 1 };
        TcpView::parse(frame).map_or(0, |v| v.payload).div_ceil(usize::from(mss)).max(1)
    }

    fn segment(&mut self, mut bytes: Vec<u8>, tso_mss: Option<u16>) -> Vec<Vec<u8>> {
        let segments = self.wire_frames(&bytes, tso_mss);
        self.number(&mut bytes, segments);
        match tso_mss {
            Some(mss) => segment(&bytes, usize::from(mss)),
            None => {
                fill_checksums(&mut bytes);
                vec![bytes]
            }
        }
    }
}

const ETH: usize = 14;

/// Header lengths (IP, TCP) of a TCP/IPv4 Ethernet frame, if it is one.
fn tcp_headers(frame: &[u8]) -> Option<(usize, usize)> {
    TcpView::parse(frame).map(|v| (v.ip_header, v.tcp_header))
}

/// Fill the TCP checksum of a TCP/IPv4 frame in place (transmit checksum
/// offload); other frames are left alone.
pub fn fill_checksums(frame: &mut [u8]) {
    let Some((ip_len, _)) = tcp_headers(frame) else { return };
    let mut ip = Ipv4Packet::new_unchecked(&mut frame[ETH..]);
    let (src, dst) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
    ip.fill_checksum();
    let total = usize::from(ip.total_len());
    let mut tcp = TcpPacket::new_unchecked(&mut frame[ETH + ip_len..ETH + total]);
    tcp.fill_checksum(&src, &dst);
}

/// Cut `frame` into frames of at most `mss` payload bytes, with valid
/// headers and checksums. A frame that is not TCP/IPv4, or already fits,
/// comes back as one frame with its checksums filled.
pub fn segment(frame: &[u8], mss: usize) -> Vec<Vec<u8>> {
    assert!(mss > 0, "an MSS of zero");
    let Some((ip_len, tcp_len)) = tcp_headers(frame) else { return vec![frame.to_vec()] };
    let headers = ETH + ip_len + tcp_len;
    let ip_total = usize::from(Ipv4Packet::new_unchecked(&frame[ETH..]).total_len());
    let payload = &frame[headers..ETH + ip_total];
    if payload.len() <= mss {
        let mut one = frame.to_vec();
        fill_checksums(&mut one);
        return vec![one];
    }
    let ip_in = Ipv4Packet::new_unchecked(&frame[ETH..]);
    let ident = ip_in.ident();
    let tcp_in = TcpPacket::new_unchecked(&frame[ETH + ip_len..]);
    let (seq, fin, psh, cwr) = (tcp_in.seq_number(), tcp_in.fin(), tcp_in.psh(), tcp_in.cwr());
    let chunks: Vec<&[u8]> = payload.chunks(mss).collect();
    let last = chunks.len() - 1;
    let mut offset = 0usize;
    chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut out = Vec::with_capacity(headers + chunk.len());
            out.extend_from_slice(&frame[..headers]);
            out.extend_from_slice(chunk);
            let mut ip = Ipv4Packet::new_unchecked(&mut out[ETH..]);
            ip.set_total_len((ip_len + tcp_len + chunk.len()) as u16);
            ip.set_ident(ident.wrapping_add(i as u16));
            ip.fill_checksum();
            let (src, dst) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
            let mut tcp = TcpPacket::new_unchecked(&mut out[ETH + ip_len..]);
            tcp.set_seq_number(seq + offset);
            tcp.set_fin(fin && i == last);
            tcp.set_psh(psh && i == last);
            tcp.set_cwr(cwr && i == 0);
            tcp.fill_checksum(&src, &dst);
            offset += chunk.len();
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TcpFrame;
    use smoltcp::wire::{TcpControl, TcpSeqNumber, TcpTimestampRepr};

    /// A literal TCP/IPv4 frame with timestamps, `len` payload bytes, PSH
    /// or FIN as asked, checksums left zero (as smoltcp leaves them for TSO).
    fn super_frame(len: usize, control: TcpControl) -> Vec<u8> {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        TcpFrame {
            seq: -10i32 as u32,
            ack: Some(77),
            window: 4000,
            control,
            timestamp: Some(TcpTimestampRepr::new(5, 6)),
            tcp_checksum: false,
            payload: &payload,
            ..TcpFrame::default()
        }
        .build()
    }

    #[test]
    fn segments_carry_the_payload_in_order_with_valid_headers() {
        let frame = super_frame(10_000, TcpControl::Psh);
        let segs = segment(&frame, 1448);
        assert_eq!(segs.len(), 7); // 6 × 1448 + 1312
        let mut data = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let ip = Ipv4Packet::new_checked(&s[ETH..]).unwrap();
            assert!(ip.verify_checksum());
            assert_eq!(usize::from(ip.total_len()), s.len() - ETH);
            let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
            let (src, dst) = (IpAddress::Ipv4(ip.src_addr()), IpAddress::Ipv4(ip.dst_addr()));
            assert!(tcp.verify_checksum(&src, &dst), "segment {i}: bad TCP checksum");
            assert_eq!(tcp.seq_number(), TcpSeqNumber(-10) + data.len(), "sequence wraps correctly");
            assert_eq!(tcp.psh(), i == 6, "PSH only on the last");
            assert_eq!(tcp.header_len(), 32, "options kept");
            assert!(s.len() <= 1514);
            data.extend_from_slice(tcp.payload());
        }
        let original: Vec<u8> = (0..10_000).map(|i| (i % 251) as u8).collect();
        assert_eq!(data, original);
    }

    #[test]
    fn fin_goes_on_the_last_segment_only() {
        let segs = segment(&super_frame(3000, TcpControl::Fin), 1448);
        let fins: Vec<bool> = segs
            .iter()
            .map(|s| TcpPacket::new_checked(Ipv4Packet::new_checked(&s[ETH..]).unwrap().payload()).unwrap().fin())
            .collect();
        assert_eq!(fins, [false, false, true]);
    }

    #[test]
    fn a_small_frame_just_gets_its_checksum() {
        let frame = super_frame(100, TcpControl::None);
        let segs = segment(&frame, 1448);
        assert_eq!(segs.len(), 1);
        let ip = Ipv4Packet::new_checked(&segs[0][ETH..]).unwrap();
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(tcp.verify_checksum(&IpAddress::Ipv4(ip.src_addr()), &IpAddress::Ipv4(ip.dst_addr())));
        assert_eq!(segs[0][..ETH + 20 + 16], frame[..ETH + 20 + 16], "headers untouched up to the checksum");
    }

    #[test]
    fn ip_ids_run_on_across_super_segments_as_linux_numbers_them() {
        // smoltcp numbers its packets 7, 8, 9: one ID per super-segment.
        let frames = [(7u16, 3000usize), (8, 100), (9, 2896)];
        let mut tso = Segmentation::default();
        let mut ids = Vec::new();
        for (ident, len) in frames {
            let mut frame = super_frame(len, TcpControl::None);
            Ipv4Packet::new_unchecked(&mut frame[ETH..]).set_ident(ident);
            assert_eq!(tso.wire_frames(&frame, Some(1448)), len.div_ceil(1448));
            for seg in tso.segment(frame, Some(1448)) {
                let ip = Ipv4Packet::new_checked(&seg[ETH..]).unwrap();
                assert!(ip.verify_checksum(), "the header checksum covers the new ID");
                ids.push(ip.ident());
            }
        }
        // 3 + 1 + 2 segments: the flow's IDs advance by one per segment.
        assert_eq!(ids, [7, 8, 9, 10, 11, 12]);
    }

    #[test]
    fn non_tcp_frames_pass_through() {
        let arp = vec![0xffu8; 42];
        assert_eq!(segment(&arp, 1448), vec![arp]);
    }
}
