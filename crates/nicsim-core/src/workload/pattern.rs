//! The seeded byte pattern every stream carries, so a receiver can check
//! each byte it gets without keeping a copy of what was sent.
//!
//! Byte `i` of stream `(seed, stream)` is byte `i mod 8` (little-endian) of
//! SplitMix64 of `key ^ (i / 8)`, where `key` mixes the seed and the stream
//! number. Any offset can be produced on its own, so a sender can resume
//! anywhere and a receiver can check any chunk.

/// One stream's generator.
#[derive(Debug, Clone, Copy)]
pub struct Pattern {
    key: u64,
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Pattern {
    /// The pattern of stream number `stream` in a run seeded with `seed`.
    pub fn new(seed: u64, stream: u64) -> Pattern {
        Pattern { key: splitmix64(seed ^ splitmix64(stream.wrapping_add(0x5eed))) }
    }

    fn word(&self, index: u64) -> [u8; 8] {
        splitmix64(self.key ^ index).to_le_bytes()
    }

    /// Fill `buf` with the stream's bytes starting at `offset`.
    pub fn fill(&self, offset: u64, buf: &mut [u8]) {
        // Unaligned head, then whole words, then the tail.
        let head = ((8 - offset % 8) % 8).min(buf.len() as u64) as usize;
        let (first, rest) = buf.split_at_mut(head);
        if head > 0 {
            let skip = (offset % 8) as usize;
            first.copy_from_slice(&self.word(offset / 8)[skip..skip + head]);
        }
        let mut index = (offset + head as u64) / 8;
        let mut words = rest.chunks_exact_mut(8);
        for chunk in &mut words {
            chunk.copy_from_slice(&self.word(index));
            index += 1;
        }
        let tail = words.into_remainder();
        if !tail.is_empty() {
            let n = tail.len();
            tail.copy_from_slice(&self.word(index)[..n]);
        }
    }

    /// The first position in `data` that differs from the stream at `offset`.
    pub fn first_mismatch(&self, offset: u64, data: &[u8]) -> Option<usize> {
        let head = ((8 - offset % 8) % 8).min(data.len() as u64) as usize;
        let check_bytes = |at: usize, len: usize| -> Option<usize> {
            let pos = offset + at as u64;
            let skip = (pos % 8) as usize;
            let word = self.word(pos / 8);
            (0..len).find(|&i| word[skip + i] != data[at + i]).map(|i| at + i)
        };
        if let Some(i) = check_bytes(0, head) {
            return Some(i);
        }
        let first_word = (offset + head as u64) / 8;
        let mut words = data[head..].chunks_exact(8);
        for (k, chunk) in (&mut words).enumerate() {
            if chunk != self.word(first_word + k as u64) {
                return check_bytes(head + 8 * k, 8);
            }
        }
        let tail = words.remainder().len();
        check_bytes(data.len() - tail, tail)
    }

    /// The expected byte at `offset` (for error messages).
    pub fn byte_at(&self, offset: u64) -> u8 {
        self.word(offset / 8)[(offset % 8) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_offset_agrees_with_a_whole_fill() {
        let p = Pattern::new(42, 0);
        let mut whole = vec![0u8; 100];
        p.fill(0, &mut whole);
        for start in 0..40 {
            let mut part = vec![0u8; 37];
            p.fill(start as u64, &mut part);
            assert_eq!(part, whole[start..start + 37]);
            assert_eq!(p.byte_at(start as u64), whole[start]);
        }
    }

    #[test]
    fn fill_agrees_with_byte_at_everywhere() {
        let p = Pattern::new(3, 2);
        for offset in 0..17u64 {
            let mut buf = vec![0u8; 29];
            p.fill(offset, &mut buf);
            for (i, &b) in buf.iter().enumerate() {
                assert_eq!(b, p.byte_at(offset + i as u64));
            }
        }
    }

    #[test]
    fn a_flip_anywhere_is_found_at_any_alignment() {
        let p = Pattern::new(5, 0);
        for offset in 0..9u64 {
            let mut data = vec![0u8; 23];
            p.fill(offset, &mut data);
            for at in 0..data.len() {
                data[at] ^= 0x80;
                assert_eq!(p.first_mismatch(offset, &data), Some(at));
                data[at] ^= 0x80;
            }
        }
    }

    #[test]
    fn detects_the_first_wrong_byte() {
        let p = Pattern::new(1, 1);
        let mut data = vec![0u8; 10_000];
        p.fill(123, &mut data);
        assert_eq!(p.first_mismatch(123, &data), None);
        data[5000] ^= 0x10;
        assert_eq!(p.first_mismatch(123, &data), Some(5000));
        assert_eq!(p.first_mismatch(124, &data[1..]), Some(4999));
    }

    #[test]
    fn streams_and_seeds_differ() {
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        let mut c = [0u8; 16];
        Pattern::new(1, 0).fill(0, &mut a);
        Pattern::new(1, 1).fill(0, &mut b);
        Pattern::new(2, 0).fill(0, &mut c);
        assert_ne!(a, b);
        assert_ne!(a, c);
    }
}
