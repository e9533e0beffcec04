//! The CPU broadphase's lists packed into bits while they wait: a tile's members (increasing
//! body indices, [`MemberList`]) and a tile's pairs of places in them ([`PlacePairs`]). The
//! pairs' list is allocated while they are all held: at 1M mixed bodies they take about a third
//! of its size (u32 members and u16 places would take nine tenths).

/// Bits written 64 to a word, lowest bit first.
#[derive(Default)]
pub(super) struct BitWriter {
    /// The full words.
    words: Vec<u64>,
    /// The bits of the word being filled, lowest first.
    filling: u64,
    /// Number of those bits (< 64).
    filled: u32,
}

impl BitWriter {
    /// Empties the writer, keeping its memory.
    pub fn clear(&mut self) {
        self.words.clear();
        (self.filling, self.filled) = (0, 0);
    }

    /// Writes the low `width` bits of `value` (`width` <= 64, higher bits of `value` zero).
    #[inline]
    pub fn put(&mut self, value: u64, width: u32) {
        self.filling |= value.checked_shl(self.filled).unwrap_or(0);
        self.filled += width;
        if self.filled >= 64 {
            self.words.push(self.filling);
            self.filled -= 64;
            // The bits of `value` that did not fit (none when it ended the word exactly).
            self.filling = value.checked_shr(width - self.filled).unwrap_or(0);
        }
    }

    /// Writes `count` in unary: `count` zeros, then a one.
    #[inline]
    pub fn put_unary(&mut self, mut count: u64) {
        while count >= 63 {
            self.put(0, 63);
            count -= 63;
        }
        self.put(1 << count, count as u32 + 1);
    }

    /// Writes `count` in unary, then the low `width` bits of `value` (<= 32, higher bits zero).
    #[inline]
    pub fn put_unary_then(&mut self, count: u64, value: u64, width: u32) {
        if count < 31 {
            // One write: fewer than 64 bits.
            self.put((value << 1 | 1) << count, count as u32 + 1 + width);
        } else {
            self.put_unary(count);
            self.put(value, width);
        }
    }

    /// Writes `value` as a Rice code of parameter `k` (<= 32): `value >> k` in unary, then its
    /// low `k` bits.
    #[inline]
    pub fn put_rice(&mut self, value: u64, k: u32) {
        self.put_unary_then(value >> k, value & ((1 << k) - 1), k);
    }

    /// Number of bits written.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.words.len() * 64 + self.filled as usize
    }

    /// The bits written (the last word's upper bits zero).
    pub fn to_words(&self) -> Box<[u64]> {
        let last = (self.filled > 0).then_some(self.filling);
        self.words.iter().copied().chain(last).collect()
    }
}

/// Reads what a [`BitWriter`] wrote, in order (zeros past its end).
pub(super) struct BitReader<'a> {
    /// The words not yet loaded.
    words: std::slice::Iter<'a, u64>,
    /// The loaded bits not yet read, lowest first; the bits above them zero.
    loaded: u64,
    /// Number of those bits (<= 64).
    left: u32,
    /// Bits read.
    #[cfg(test)]
    at: usize,
}

impl<'a> BitReader<'a> {
    /// Reads `words` ([`BitWriter::to_words`]) from the first bit.
    pub fn new(words: &'a [u64]) -> BitReader<'a> {
        BitReader {
            words: words.iter(),
            loaded: 0,
            left: 0,
            #[cfg(test)]
            at: 0,
        }
    }

    /// The next word (zero past the end).
    #[inline]
    fn load(&mut self) -> u64 {
        self.words.next().copied().unwrap_or(0)
    }

    /// The next `width` bits (<= 64) as a number.
    #[inline]
    pub fn get(&mut self, width: u32) -> u64 {
        #[cfg(test)]
        {
            self.at += width as usize;
        }
        let mask = u64::MAX.checked_shr(64 - width).unwrap_or(0);
        if width <= self.left {
            let value = self.loaded & mask;
            self.loaded = self.loaded.checked_shr(width).unwrap_or(0);
            self.left -= width;
            value
        } else {
            // The loaded bits, then the rest from the next word.
            let word = self.load();
            let value = (self.loaded | word.checked_shl(self.left).unwrap_or(0)) & mask;
            let taken = width - self.left;
            self.loaded = word.checked_shr(taken).unwrap_or(0);
            self.left = 64 - taken;
            value
        }
    }

    /// The next number written in unary ([`BitWriter::put_unary`]).
    #[inline]
    pub fn get_unary(&mut self) -> u64 {
        let mut count = 0;
        // Only a writer's zeros pass here, never the end of the words, so this ends.
        while self.loaded == 0 {
            count += u64::from(self.left);
            self.loaded = self.load();
            self.left = 64;
        }
        let zeros = self.loaded.trailing_zeros();
        #[cfg(test)]
        {
            self.at += (count + u64::from(zeros) + 1) as usize;
        }
        // `zeros` < `left`: the one ends within the loaded bits.
        self.loaded = self.loaded.checked_shr(zeros + 1).unwrap_or(0);
        self.left -= zeros + 1;
        count + u64::from(zeros)
    }

    /// The next Rice code of parameter `k` ([`BitWriter::put_rice`]).
    #[inline]
    pub fn get_rice(&mut self, k: u32) -> u64 {
        let high = self.get_unary();
        high << k | self.get(k)
    }
}

/// Bits a number below `bound` (> 0) takes.
fn width_below(bound: usize) -> u32 {
    usize::BITS - (bound.max(2) - 1).leading_zeros()
}

/// An increasing list of u32 (a tile's members, in body order), as the Rice codes of the gaps
/// between them: about 9 bits a member at 1M mixed bodies (about 5,200 members a tile).
pub(super) struct MemberList {
    len: usize,
    /// The Rice parameter, about log2 of the mean gap.
    k: u32,
    bits: Box<[u64]>,
}

impl MemberList {
    /// Packs `values`, increasing, with `writer` as scratch.
    pub fn pack(values: &[u32], writer: &mut BitWriter) -> MemberList {
        let last = values.last().map_or(0, |&v| u64::from(v) + 1);
        let mean_gap = last / values.len().max(1) as u64;
        let k = mean_gap.max(1).ilog2();
        writer.clear();
        let mut previous = 0;
        for &value in values {
            writer.put_rice(u64::from(value - previous), k);
            previous = value;
        }
        MemberList {
            len: values.len(),
            k,
            bits: writer.to_words(),
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Replaces `out`'s contents with the values.
    pub fn unpack_into(&self, out: &mut Vec<u32>) {
        out.clear();
        let mut reader = BitReader::new(&self.bits);
        let mut value = 0;
        out.extend((0..self.len).map(|_| {
            value += reader.get_rice(self.k) as u32;
            value
        }));
    }
}

/// A tile's pairs `[a, b]` of places below `places`, `a < b`, by increasing `a` (their order for
/// one `a` is lost): each pair as how far its `a` is past the previous pair's, in unary, then its
/// `b` in as many bits as a place needs. About 15 bits a pair at 1M mixed bodies, read in one
/// loop over the pairs (no loop over the places).
pub(super) struct PlacePairs {
    len: usize,
    places: usize,
    bits: Box<[u64]>,
}

impl PlacePairs {
    /// Packs `pairs` (each `a < b < places`), with `counts`, `grouped` and `writer` as scratch.
    pub fn pack(
        pairs: &[[u32; 2]],
        places: usize,
        (counts, grouped, writer): (&mut Vec<usize>, &mut Vec<[u32; 2]>, &mut BitWriter),
    ) -> PlacePairs {
        // A counting sort by `a`: each place's count, their prefix sums, each pair at its place.
        counts.clear();
        counts.resize(places + 1, 0);
        for &[a, _] in pairs {
            counts[a as usize + 1] += 1;
        }
        for a in 0..places {
            counts[a + 1] += counts[a];
        }
        grouped.clear();
        grouped.resize(pairs.len(), [0; 2]);
        for &pair in pairs {
            let next = &mut counts[pair[0] as usize];
            grouped[*next] = pair;
            *next += 1;
        }
        let width = width_below(places);
        writer.clear();
        let mut previous = 0;
        for &[a, b] in grouped.iter() {
            writer.put_unary_then(u64::from(a - previous), u64::from(b), width);
            previous = a;
        }
        PlacePairs {
            len: pairs.len(),
            places,
            bits: writer.to_words(),
        }
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Calls `f(a, b)` with each pair, by increasing `a`.
    pub fn for_each(&self, mut f: impl FnMut(u32, u32)) {
        let width = width_below(self.places);
        let mut reader = BitReader::new(&self.bits);
        let mut a = 0;
        for _ in 0..self.len {
            a += reader.get_unary() as u32;
            f(a, reader.get(width) as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::unit_floats;

    #[test]
    fn bits_read_back_as_written() {
        let mut next = unit_floats(7);
        let values: Vec<(u64, u32)> = (0..3000)
            .map(|_| {
                let width = ((next() * 65.0) as u32).min(64);
                let mask = if width == 64 { u64::MAX } else { (1 << width) - 1 };
                let value = (f64::from(next()) * 2f64.powi(width as i32)) as u64;
                (value.min(mask), width)
            })
            .collect();
        let mut writer = BitWriter::default();
        for (i, &(value, width)) in values.iter().enumerate() {
            match i % 3 {
                0 => writer.put(value, width),
                1 => writer.put_unary(value % 200),
                _ => writer.put_rice(value % 100_000, width % 33),
            }
        }
        let words = writer.to_words();
        let mut reader = BitReader::new(&words);
        for (i, &(value, width)) in values.iter().enumerate() {
            match i % 3 {
                0 => assert_eq!(reader.get(width), value, "value {i}"),
                1 => assert_eq!(reader.get_unary(), value % 200, "value {i}"),
                _ => assert_eq!(reader.get_rice(width % 33), value % 100_000, "value {i}"),
            }
        }
        assert_eq!(reader.at, writer.len());
    }

    #[test]
    fn member_lists_unpack_to_their_values() {
        let mut writer = BitWriter::default();
        let mut out = Vec::new();
        let mut next = unit_floats(3);
        let spread: Vec<u32> = (0..5000)
            .scan(0u32, |at, _| {
                *at += 1 + (next().powi(3) * 5000.0) as u32;
                Some(*at)
            })
            .collect();
        for values in [
            vec![],
            vec![0],
            vec![u32::MAX],
            vec![0, 1, 2, 3],
            vec![5, u32::MAX],
            spread,
        ] {
            MemberList::pack(&values, &mut writer).unpack_into(&mut out);
            assert_eq!(out, values);
        }
    }

    #[test]
    fn place_pairs_keep_every_pair() {
        let mut scratch = (Vec::new(), Vec::new(), BitWriter::default());
        let mut next = unit_floats(11);
        let random: Vec<[u32; 2]> = (0..2000)
            .map(|_| {
                let (a, b) = ((next() * 299.0) as u32, (next() * 299.0) as u32);
                [a.min(b), a.max(b) + 1]
            })
            .collect();
        let crowded: Vec<[u32; 2]> = (0..200).flat_map(|b| [[0, b + 1]; 2]).collect();
        let wide = vec![[0, (1 << 20) - 1], [70_000, 70_001]];
        for (pairs, places) in [
            (vec![], 0),
            (vec![], 5),
            (random, 301),
            (crowded, 201),
            (wide, 1 << 20),
        ] {
            let packed = PlacePairs::pack(&pairs, places, (&mut scratch.0, &mut scratch.1, &mut scratch.2));
            assert_eq!(packed.len(), pairs.len());
            let mut back = Vec::new();
            packed.for_each(|a, b| back.push([a, b]));
            let mut expected = pairs.clone();
            expected.sort_unstable();
            back.sort_unstable();
            assert_eq!(back, expected, "{places} places");
        }
    }
}
