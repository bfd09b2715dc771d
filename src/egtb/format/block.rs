//! One block of a file: its values as codes (broken entries filled, DTZ50 as differences from
//! DTZ), packed one, two bytes or three results to a byte, and stored raw or compressed alone.

use super::header::*;
use super::value::*;
use std::io::{self};

pub(super) fn flags(unmark_broken: bool, delta: bool, equals_dtz: bool) -> u8 {
    let mut f = 0;
    if unmark_broken {
        f |= FLAG_BROKEN_UNMARKED;
    }
    if delta {
        f |= FLAG_DTZ_DELTA;
        if equals_dtz {
            f |= FLAG_EQUALS_DTZ;
        }
    }
    f
}

/// The depth of a win or loss; None for a draw or a broken entry.
#[inline]
pub(super) fn depth_of(v: TbValue) -> Option<u16> {
    match v.outcome() {
        Outcome::Win(n) | Outcome::Loss(n) => Some(n),
        _ => None,
    }
}

/// The stored codes of one block's values, into `out`; returns whether a DTZ50 block of
/// differences tells DTZ50 from DTZ anywhere (else the flag `FLAG_EQUALS_DTZ` may stand).
///
/// Stored as differences from DTZ's values (`dtz`): 0 where the value is DTZ's or the entry
/// broken, else the value plus one; depth-coded, 0 also where DTZ50 draws (the WDL file tells
/// a draw) or has DTZ's depth, else the depth plus one. Otherwise the values (or depths),
/// broken entries holding the code before them (the block's first, for the ones that open it:
/// long runs for the coder) when `unmark_broken`, and depth-coded draws too.
pub(super) fn block_codes(
    values: &[TbValue],
    dtz: Option<&[TbValue]>,
    unmark_broken: bool,
    depths: bool,
    out: &mut [u16],
) -> bool {
    if let Some(dtz) = dtz {
        let mut differs = false;
        for ((&v, &d), o) in values.iter().zip(dtz).zip(out.iter_mut()) {
            *o = if v == TbValue::BROKEN || v == d {
                0
            } else if !depths {
                v.0 + 1
            } else {
                match (depth_of(v), depth_of(d)) {
                    (None, _) => 0,
                    (Some(n), Some(m)) if n == m => 0,
                    (Some(n), _) => n + 1,
                }
            };
            // Depth-coded, a draw under the rule where DTZ wins or loses has code 0.
            differs |= *o != 0 || v != d && v != TbValue::BROKEN;
        }
        return differs;
    }
    let code = |v: TbValue| {
        if depths {
            depth_of(v)
        } else {
            (v != TbValue::BROKEN || !unmark_broken).then_some(v.0)
        }
    };
    let mut prev =
        values
            .iter()
            .find_map(|&v| code(v))
            .unwrap_or(if depths { 0 } else { TbValue::DRAW.0 });
    for (&v, o) in values.iter().zip(out.iter_mut()) {
        if let Some(c) = code(v) {
            prev = c;
        }
        *o = prev;
    }
    false
}

/// How a block's bytes hold its values.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Packing {
    /// One byte a value.
    Byte,
    /// Two bytes a value, little-endian.
    Word,
    /// Three values a byte in base 5, the first the lowest digit: a WDL file's codes 1 to 5
    /// as digits 0 to 4. The coder then sees a third of the bytes, and each carries more.
    Base5,
}

pub(super) const POW5: [u8; 3] = [1, 5, 25];

impl Packing {
    pub(super) fn of(encoding: u8, width: usize) -> Packing {
        match (encoding, width) {
            (ENCODING_WDL5_PACKED, _) => Packing::Base5,
            (_, 1) => Packing::Byte,
            _ => Packing::Word,
        }
    }

    /// Values a block holds.
    pub(super) fn per_block(self) -> usize {
        match self {
            Packing::Byte => BLOCK_SIZE,
            Packing::Word => BLOCK_SIZE / 2,
            Packing::Base5 => BLOCK_SIZE * 3,
        }
    }

    /// Value `i` of a block's bytes.
    #[inline(always)]
    pub(super) fn read(self, bytes: &[u8], i: usize) -> TbValue {
        TbValue(match self {
            Packing::Byte => bytes[i] as u16,
            Packing::Word => u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]),
            Packing::Base5 => (bytes[i / 3] / POW5[i % 3] % 5) as u16 + 1,
        })
    }

    /// One block of codes, padded with zeros.
    pub(super) fn pack(self, codes: &[u16]) -> Vec<u8> {
        let mut block = vec![0u8; BLOCK_SIZE];
        for (i, &c) in codes.iter().enumerate() {
            match self {
                Packing::Byte => block[i] = c as u8,
                Packing::Word => block[2 * i..2 * i + 2].copy_from_slice(&c.to_le_bytes()),
                // Codes 1 to 5 (a broken entry's 0 is never stored: WDL files leave them
                // unmarked).
                Packing::Base5 => block[i / 3] += (c.clamp(1, 5) as u8 - 1) * POW5[i % 3],
            }
        }
        block
    }
}

thread_local! {
    static ZSTD_WRITER: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
    /// One decompression context per thread: a probe allocates nothing.
    static ZSTD_READER: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompresses one stored block into `buf` (`BLOCK_SIZE` bytes); false if it does not give a
/// whole block.
pub(super) fn unpack_block(compression: u8, src: &[u8], buf: &mut [u8]) -> bool {
    if src.len() == BLOCK_SIZE {
        buf.copy_from_slice(src);
        return true;
    }
    match compression {
        COMPRESSION_LZ4 => {
            matches!(lz4_flex::block::decompress_into(src, buf), Ok(n) if n == BLOCK_SIZE)
        }
        COMPRESSION_ZSTD => ZSTD_READER.with(|r| {
            let mut r = r.borrow_mut();
            if r.is_none() {
                *r = zstd::bulk::Decompressor::new().ok();
            }
            r.as_mut().is_some_and(
                |d| matches!(d.decompress_to_buffer(src, buf), Ok(n) if n == BLOCK_SIZE),
            )
        }),
        _ => false,
    }
}

/// A packed block as it is stored: compressed if that is smaller, else raw. A stored block of
/// exactly `BLOCK_SIZE` bytes is raw.
pub(super) fn store_block(raw: Vec<u8>, compression: Compression) -> io::Result<Vec<u8>> {
    let packed = match compression {
        Compression::None => return Ok(raw),
        Compression::Lz4 => lz4_flex::block::compress(&raw),
        Compression::Zstd => ZSTD_WRITER.with(|w| {
            let mut w = w.borrow_mut();
            if w.is_none() {
                let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
                c.set_parameter(zstd::stream::raw::CParameter::MinMatch(ZSTD_MIN_MATCH))?;
                *w = Some(c);
            }
            w.as_mut().expect("made above").compress(&raw)
        })?,
    };
    // Not decompressed again to check it: that took a tenth of the compression's time, and a
    // build's verification (`gentb` without `--no-verify`) reads every block back anyway.
    Ok(if packed.len() >= BLOCK_SIZE {
        raw
    } else {
        packed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packings_give_back_what_they_packed() {
        let mut rng = fastrand::Rng::with_seed(7);
        for (packing, top) in [
            (Packing::Byte, 255),
            (Packing::Word, u16::MAX),
            (Packing::Base5, 5),
        ] {
            // A whole block and a last one cut short, as a half ends.
            for n in [packing.per_block(), packing.per_block() - 2] {
                let codes: Vec<u16> = (0..n).map(|_| rng.u16(1..=top)).collect();
                let block = packing.pack(&codes);
                assert_eq!(block.len(), BLOCK_SIZE);
                let back: Vec<u16> = (0..n).map(|i| packing.read(&block, i).raw()).collect();
                assert_eq!(back, codes, "{packing:?}");
            }
        }
    }
}
