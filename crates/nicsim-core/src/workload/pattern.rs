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
        let mut pos = 0;
        let mut at = offset;
        while pos < buf.len() {
            let word = self.word(at / 8);
            let skip = (at % 8) as usize;
            let n = (8 - skip).min(buf.len() - pos);
            buf[pos..pos + n].copy_from_slice(&word[skip..skip + n]);
            pos += n;
            at += n as u64;
        }
    }

    /// The first position in `data` that differs from the stream at `offset`.
    pub fn first_mismatch(&self, offset: u64, data: &[u8]) -> Option<usize> {
        let mut expected = [0u8; 4096];
        let mut pos = 0;
        while pos < data.len() {
            let n = (data.len() - pos).min(expected.len());
            self.fill(offset + pos as u64, &mut expected[..n]);
            if expected[..n] != data[pos..pos + n] {
                let i = (0..n).find(|&i| expected[i] != data[pos + i]).expect("slices differ");
                return Some(pos + i);
            }
            pos += n;
        }
        None
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
