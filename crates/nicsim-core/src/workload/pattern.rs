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

/// Words computed and compared together: a block the compiler turns into
/// vector instructions where the CPU has 64-bit vector multiplies.
const BLOCK: usize = 8;

/// Fill `out` (a whole number of words) with words `first..` of the stream.
#[inline(always)]
fn fill_words_generic(key: u64, first: u64, out: &mut [u8]) {
    // Compute a run of words into a buffer (a loop the compiler vectorises
    // with contiguous stores), then copy it out as bytes.
    let mut words = [0u64; 4 * BLOCK];
    let mut index = first;
    for chunk in out.chunks_mut(8 * words.len()) {
        let n = chunk.len() / 8;
        for (i, w) in words[..n].iter_mut().enumerate() {
            *w = splitmix64(key ^ (index + i as u64));
        }
        for (dst, w) in chunk.chunks_exact_mut(8).zip(&words[..n]) {
            dst.copy_from_slice(&w.to_le_bytes());
        }
        index += n as u64;
    }
}

/// The first word of `data` (a whole number of words) that differs from
/// words `first..` of the stream. The same loop shape as
/// [`fill_words_generic`]: a run of expected words computed into a buffer
/// (a loop the compiler vectorises), then compared with one OR of XORs;
/// only a run that differs is searched word by word.
#[inline(always)]
fn mismatched_word_generic(key: u64, first: u64, data: &[u8]) -> Option<usize> {
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let mut words = [0u64; 4 * BLOCK];
    let mut index = first;
    for (c, chunk) in data.chunks(8 * words.len()).enumerate() {
        let n = chunk.len() / 8;
        for (i, w) in words[..n].iter_mut().enumerate() {
            *w = splitmix64(key ^ (index + i as u64));
        }
        let diff = chunk.chunks_exact(8).zip(&words[..n]).fold(0, |acc, (got, want)| acc | (word(got) ^ want));
        if diff != 0 {
            let j = chunk.chunks_exact(8).zip(&words[..n]).position(|(got, want)| word(got) != *want);
            return Some(c * words.len() + j.expect("a word differs"));
        }
        index += n as u64;
    }
    None
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
unsafe fn fill_words_avx512(key: u64, first: u64, out: &mut [u8]) {
    fill_words_generic(key, first, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
unsafe fn mismatched_word_avx512(key: u64, first: u64, data: &[u8]) -> Option<usize> {
    mismatched_word_generic(key, first, data)
}

/// Whether this CPU has AVX-512 with 64-bit multiplies (checked once).
#[cfg(target_arch = "x86_64")]
fn avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

/// [`fill_words_generic`], vectorised where the CPU allows; the bytes are
/// the same either way.
fn fill_words(key: u64, first: u64, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { fill_words_avx512(key, first, out) };
    }
    fill_words_generic(key, first, out)
}

/// [`mismatched_word_generic`], vectorised where the CPU allows.
fn mismatched_word(key: u64, first: u64, data: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { mismatched_word_avx512(key, first, data) };
    }
    mismatched_word_generic(key, first, data)
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
        let index = (offset + head as u64) / 8;
        let whole = rest.len() / 8 * 8;
        let (words, tail) = rest.split_at_mut(whole);
        fill_words(self.key, index, words);
        if !tail.is_empty() {
            let n = tail.len();
            tail.copy_from_slice(&self.word(index + (whole / 8) as u64)[..n]);
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
        let whole = (data.len() - head) / 8 * 8;
        if let Some(k) = mismatched_word(self.key, first_word, &data[head..head + whole]) {
            return check_bytes(head + 8 * k, 8);
        }
        let tail = data.len() - head - whole;
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
    fn long_buffers_agree_with_byte_at_and_flips_are_found_in_every_block() {
        // Longer than several blocks, at every alignment, so the vector
        // path, the remainder words and the tail are all exercised.
        let p = Pattern::new(9, 4);
        for offset in [0u64, 1, 7, 8, 61, 64, 1000] {
            let mut buf = vec![0u8; 8 * BLOCK * 5 + 27];
            p.fill(offset, &mut buf);
            for (i, &b) in buf.iter().enumerate() {
                assert_eq!(b, p.byte_at(offset + i as u64), "offset {offset}, byte {i}");
            }
            assert_eq!(p.first_mismatch(offset, &buf), None);
            for at in (0..buf.len()).step_by(13).chain([buf.len() - 1]) {
                buf[at] ^= 0x01;
                assert_eq!(p.first_mismatch(offset, &buf), Some(at), "offset {offset}, flip at {at}");
                buf[at] ^= 0x01;
            }
        }
    }

    #[test]
    fn vector_and_plain_paths_give_the_same_words() {
        let key = Pattern::new(3, 3).key;
        let mut plain = vec![0u8; 8 * 100];
        let mut fast = vec![0u8; 8 * 100];
        fill_words_generic(key, 12345, &mut plain);
        fill_words(key, 12345, &mut fast);
        assert_eq!(plain, fast);
        fast[8 * 77 + 3] ^= 4;
        assert_eq!(mismatched_word(key, 12345, &fast), Some(77));
        assert_eq!(mismatched_word_generic(key, 12345, &fast), Some(77));
        assert_eq!(mismatched_word(key, 12345, &plain), None);
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
