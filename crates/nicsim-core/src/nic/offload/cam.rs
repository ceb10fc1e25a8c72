//! The match CAM proposed by Kurmann, Rauch and Stricker (section 6): a
//! 256-bit pattern register and a 256-bit mask register ("don't care" bits
//! cleared) per entry, matched against the first 256 bits (32 bytes) of
//! every incoming frame; a frame matching any entry goes to the fast
//! (speculative) receive descriptor list, every other frame to the regular
//! list, so interfering traffic no longer breaks a speculation.
//!
//! Associativity is the number of entries (2 or 4). The driver programs
//! [`fragment_entries`]: IPv4 fragments of TCP packets addressed to this
//! host. The first 32 bytes reach the IP source address and the first half
//! of the destination address, so the CAM sees the More-Fragments flag and
//! the fragment offset but no port: a page train of any sender to this host
//! counts as fast. Left out: the control path from the checksum logic (its
//! reliable header split is assumed), timing (a CAM lookup is at wire speed).

/// Bytes of a frame the CAM compares.
pub const WIDTH: usize = 32;

/// One pattern/mask pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The bits a frame must have where `mask` is set.
    pub pattern: [u8; WIDTH],
    /// Bits compared (a cleared bit is "don't care").
    pub mask: [u8; WIDTH],
}

impl Entry {
    /// Whether `frame` matches (a frame shorter than 32 bytes is padded with zeros).
    pub fn matches(&self, frame: &[u8]) -> bool {
        (0..WIDTH).all(|i| (frame.get(i).copied().unwrap_or(0) ^ self.pattern[i]) & self.mask[i] == 0)
    }

    /// An entry that compares nothing yet.
    fn empty() -> Entry {
        Entry { pattern: [0; WIDTH], mask: [0; WIDTH] }
    }

    /// Compare byte `at` with `value` under `mask`.
    fn byte(mut self, at: usize, value: u8, mask: u8) -> Entry {
        self.pattern[at] = value & mask;
        self.mask[at] = mask;
        self
    }
}

/// A CAM of `ways` entries selecting the fast receive list.
#[derive(Debug, Clone)]
pub struct MatchCam {
    entries: Vec<Entry>,
    ways: usize,
}

impl MatchCam {
    /// An empty CAM with `ways` entries (it matches nothing until programmed).
    pub fn new(ways: usize) -> MatchCam {
        MatchCam { entries: Vec::with_capacity(ways), ways }
    }

    /// Program `entry` into a free way; false when every way is taken.
    pub fn program(&mut self, entry: Entry) -> bool {
        if self.entries.len() >= self.ways {
            return false;
        }
        self.entries.push(entry);
        true
    }

    /// Whether `frame` goes to the fast list.
    pub fn matches(&self, frame: &[u8]) -> bool {
        self.entries.iter().any(|e| e.matches(frame))
    }
}

/// Entries for page trains to the host with MAC `mac`: TCP/IPv4 without
/// options, More-Fragments set (first and middle fragments, any offset), or
/// More-Fragments clear at the offset of the last fragment of a train of
/// `n` fragments of `payload` bytes, for n = max, max - 1, ... while ways
/// are left (a 2-way CAM catches full pages; a 4-way CAM also shorter trains).
pub fn fragment_entries(mac: [u8; 6], ways: usize, payload: usize, max_fragments: usize) -> Vec<Entry> {
    let mut base = Entry::empty();
    for (i, b) in mac.iter().enumerate() {
        base = base.byte(i, *b, 0xff);
    }
    // EtherType IPv4, version 4 with a 20-byte header, protocol TCP.
    let base = base.byte(12, 0x08, 0xff).byte(13, 0x00, 0xff).byte(14, 0x45, 0xff).byte(23, 6, 0xff);
    // Flags and fragment offset: bytes 20-21 (bit 0x20 of byte 20 is More-Fragments).
    let mut out = vec![base.byte(20, 0x20, 0x20)];
    for n in (2..=max_fragments).rev() {
        if out.len() >= ways {
            break;
        }
        let units = ((n - 1) * payload / 8) as u16;
        let [hi, lo] = units.to_be_bytes();
        out.push(base.byte(20, hi, 0x3f).byte(21, lo, 0xff));
    }
    out.truncate(ways);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::frag::{fragment, tests::tcp_frame};

    #[test]
    fn two_way_cam_takes_page_fragments_and_nothing_else() {
        let mac = [0x02, 0, 0, 0, 0, 2];
        let mut cam = MatchCam::new(2);
        for e in fragment_entries(mac, 2, 1480, 3) {
            assert!(cam.program(e));
        }
        assert!(!cam.program(Entry::empty()), "both ways are taken");
        let frags = fragment(&tcp_frame(4096), 1500, 5).unwrap();
        assert!(frags.iter().all(|f| cam.matches(f)));
        // A plain TCP segment, an ACK, a frame for another MAC, a short frame.
        assert!(!cam.matches(&tcp_frame(1448)));
        assert!(!cam.matches(&tcp_frame(0)));
        let mut other = frags[0].clone();
        other[5] = 3;
        assert!(!cam.matches(&other));
        assert!(!cam.matches(&[0x02, 0, 0]));
        // A two-fragment train's last fragment needs a third way.
        let short = fragment(&tcp_frame(2000), 1500, 6).unwrap();
        assert_eq!(short.len(), 2);
        assert!(!cam.matches(&short[1]));
        let mut cam4 = MatchCam::new(4);
        for e in fragment_entries(mac, 4, 1480, 3) {
            assert!(cam4.program(e));
        }
        assert!(short.iter().chain(&frags).all(|f| cam4.matches(f)));
    }

    #[test]
    fn mask_bits_are_dont_care() {
        let e = Entry::empty().byte(0, 0xf0, 0xf0);
        assert!(e.matches(&[0xf7]));
        assert!(!e.matches(&[0x70]));
    }
}
