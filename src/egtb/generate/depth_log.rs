//! The entries each pass of `bitmaps` resolved, kept on disk: after pass n the bitmap of the
//! entries resolved at depth n + 1, per half, cut into segments of `SEGMENT` entries, the
//! empty ones left out and the rest compressed; at the end, the bitmaps of the won and the lost
//! entries, and in DTM those of the entries with a winning capture, for the later solves. The
//! solve then needs no value per entry in memory, nor its bits once it is over; the values are
//! put together at the end, one segment at a time (`DepthReader::for_each_resolved`), from
//! the few passes that touched it.

use super::bits::Plane;
use crate::egtb::index::Half;
use memmap2::Mmap;
use rayon::prelude::*;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Entries a record covers (a multiple of 64: whole words of a bitmap).
pub const SEGMENT: u64 = 1 << 20;
const SEGMENT_WORDS: usize = (SEGMENT / 64) as usize;

/// Fast compression: the records are written once and read once, and most are sparse.
const LEVEL: i32 = 1;

/// The depth that marks the records of won entries.
const WON: u16 = u16::MAX;
/// The depth that marks the records of lost entries.
const LOST: u16 = u16::MAX - 1;
/// The depth that marks the records of the entries with a winning capture
/// (`DepthLog::append_capture_wins`). Every depth below it is a pass's.
const CAPTURE_WINS: u16 = u16::MAX - 2;

#[derive(Clone, Copy, Debug)]
struct Record {
    half: u8,
    segment: u32,
    depth: u16,
    offset: u64,
    len: u32,
}

/// The log being written, pass by pass.
pub struct DepthLog {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    records: Vec<Record>,
    written: u64,
    /// The deepest depth recorded.
    deepest: u16,
}

impl DepthLog {
    /// A new log at `path` (a file of the build's staging directory).
    pub fn create(path: &Path) -> io::Result<DepthLog> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        Ok(DepthLog {
            path: path.to_path_buf(),
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            records: Vec::new(),
            written: 0,
            deepest: 0,
        })
    }

    /// Records that the entries set in `bits` (of half `half`) were resolved at `depth`.
    pub fn append<const P: usize>(
        &mut self,
        half: Half,
        depth: u16,
        bits: Plane<P>,
    ) -> io::Result<()> {
        debug_assert!(depth < CAPTURE_WINS);
        self.write(half, depth, bits)
    }

    /// Records which entries of half `half` are won.
    pub fn append_won<const P: usize>(&mut self, half: Half, bits: Plane<P>) -> io::Result<()> {
        self.write(half, WON, bits)
    }

    /// Records which entries of half `half` are lost.
    pub fn append_lost<const P: usize>(&mut self, half: Half, bits: Plane<P>) -> io::Result<()> {
        self.write(half, LOST, bits)
    }

    /// Records which entries of half `half` have a capture to a position the opponent loses.
    pub fn append_capture_wins<const P: usize>(
        &mut self,
        half: Half,
        bits: Plane<P>,
    ) -> io::Result<()> {
        self.write(half, CAPTURE_WINS, bits)
    }

    fn write<const P: usize>(&mut self, half: Half, depth: u16, bits: Plane<P>) -> io::Result<()> {
        // One raw buffer and one compression context per thread, not per segment: a pass of
        // a deep endgame writes thousands of records (KRBKNN's DTM: 446 passes).
        let parts: Vec<(u32, Vec<u8>)> = (0..bits.word_count().div_ceil(SEGMENT_WORDS))
            .into_par_iter()
            .map_init(
                || (Vec::new(), zstd::bulk::Compressor::new(LEVEL)),
                |(raw, compressor), s| {
                    let words = s * SEGMENT_WORDS..((s + 1) * SEGMENT_WORDS).min(bits.word_count());
                    if !bits.may_hold(words.clone()) || !bits.read_words(words, raw) {
                        return None;
                    }
                    let compressor = match compressor {
                        Ok(c) => c,
                        Err(e) => return Some(Err(io::Error::new(e.kind(), e.to_string()))),
                    };
                    Some(compressor.compress(raw).map(|bytes| (s as u32, bytes)))
                },
            )
            .flatten()
            .collect::<io::Result<_>>()?;
        let out = self.out.as_mut().expect("open until finished");
        for (segment, bytes) in parts {
            out.write_all(&bytes)?;
            self.records.push(Record {
                half: half as u8,
                segment,
                depth,
                offset: self.written,
                len: bytes.len() as u32,
            });
            self.written += bytes.len() as u64;
            if depth < CAPTURE_WINS {
                self.deepest = self.deepest.max(depth);
            }
        }
        Ok(())
    }

    /// The finished log, for reading.
    pub fn finish(mut self) -> io::Result<DepthReader> {
        let out = self.out.take().expect("finished once");
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_data()?;
        // SAFETY: the file was created new by this build in its own staging directory, is
        // complete, and nothing writes it again while it is mapped (it is removed when the
        // reader is dropped). An empty file cannot be mapped on every platform: no map then.
        let map = if self.written == 0 {
            None
        } else {
            Some(unsafe { Mmap::map(&file)? })
        };
        let mut records = std::mem::take(&mut self.records);
        records.sort_unstable_by_key(|r| (r.half, r.segment, r.depth));
        Ok(DepthReader {
            path: std::mem::take(&mut self.path),
            map,
            records,
            deepest: self.deepest,
        })
    }
}

impl Drop for DepthLog {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A finished log: which depth every resolved entry has.
pub struct DepthReader {
    path: PathBuf,
    map: Option<Mmap>,
    records: Vec<Record>,
    deepest: u16,
}

impl DepthReader {
    /// The deepest depth at which an entry was resolved.
    pub fn deepest(&self) -> u16 {
        self.deepest
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Calls `f(entry)` (in parallel) for every entry of half `half` resolved at `depth`.
    pub fn for_each_at_depth(
        &self,
        half: Half,
        depth: u16,
        f: impl Fn(u64) + Sync,
    ) -> io::Result<()> {
        debug_assert!(depth < CAPTURE_WINS);
        self.for_each_marked(half, depth, f)
    }

    /// Calls `f(w, bits)` (in parallel) for every word `w` of half `half`'s entries with a
    /// winning capture (`DepthLog::append_capture_wins`) that holds one, `bits` those of it.
    pub fn for_each_capture_win_word(
        &self,
        half: Half,
        f: impl Fn(usize, u64) + Sync,
    ) -> io::Result<()> {
        self.for_each_marked_word(half, CAPTURE_WINS, f)
    }

    /// Calls `f(w, bits)` (in parallel) for every word `w` of half `half`'s entries that holds
    /// an entry that was lost, `bits` those of it.
    pub fn for_each_lost_word(&self, half: Half, f: impl Fn(usize, u64) + Sync) -> io::Result<()> {
        self.for_each_marked_word(half, LOST, f)
    }

    fn for_each_marked(&self, half: Half, depth: u16, f: impl Fn(u64) + Sync) -> io::Result<()> {
        self.for_each_marked_word(half, depth, |w, bits| for_each_bit(w, bits, &f))
    }

    fn for_each_marked_word(
        &self,
        half: Half,
        depth: u16,
        f: impl Fn(usize, u64) + Sync,
    ) -> io::Result<()> {
        let map = self.map.as_deref().unwrap_or(&[]);
        self.records
            .par_iter()
            .filter(|r| r.half == half as u8 && r.depth == depth)
            .try_for_each_init(
                || (Vec::new(), zstd::bulk::Decompressor::new()),
                |(words, dctx), r| -> io::Result<()> {
                    let dctx = dctx
                        .as_mut()
                        .map_err(|e| io::Error::new(e.kind(), e.to_string()))?;
                    let src = &map[r.offset as usize..r.offset as usize + r.len as usize];
                    words.resize(SEGMENT_WORDS * 8, 0);
                    let n = dctx.decompress_to_buffer(src, words)?;
                    for_each_word(&words[..n], r.segment as usize * SEGMENT_WORDS, &f);
                    Ok(())
                },
            )
    }

    /// Calls `f(entry, depth, won)` for every entry of segment `segment` of half `half` that
    /// was resolved (at most once per entry; the others are draws or broken).
    pub fn for_each_resolved(
        &self,
        half: Half,
        segment: u64,
        scratch: &mut LogScratch,
        mut f: impl FnMut(u64, u16, bool),
    ) -> io::Result<()> {
        let LogScratch { words, won, dctx } = scratch;
        let key = (half as u8, segment as u32);
        let first = self.records.partition_point(|r| (r.half, r.segment) < key);
        let records = self.records[first..]
            .iter()
            .take_while(|r| (r.half, r.segment) == key);
        let map = self.map.as_deref().unwrap_or(&[]);
        // Sorted by depth: the won entries' record, if any, comes last.
        won.clear();
        won.resize(SEGMENT_WORDS * 8, 0);
        if let Some(r) = records.clone().last().filter(|r| r.depth == WON) {
            let src = &map[r.offset as usize..r.offset as usize + r.len as usize];
            dctx.decompress_to_buffer(src, won)?;
        }
        for r in records.filter(|r| r.depth < CAPTURE_WINS) {
            let src = &map[r.offset as usize..r.offset as usize + r.len as usize];
            words.resize(SEGMENT_WORDS * 8, 0);
            let n = dctx.decompress_to_buffer(src, words)?;
            for_each_word(&words[..n], (segment * SEGMENT) as usize / 64, |w, bits| {
                for_each_bit(w, bits, |i| {
                    let k = i - segment * SEGMENT;
                    f(i, r.depth, won[(k / 8) as usize] >> (k % 8) & 1 != 0);
                })
            });
        }
        Ok(())
    }
}

/// Calls `f(w, bits)` for every word of a record's bytes with a bit set, `w` counted from
/// `first`.
fn for_each_word(bytes: &[u8], first: usize, mut f: impl FnMut(usize, u64)) {
    for (w, chunk) in bytes.chunks_exact(8).enumerate() {
        let bits = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        if bits != 0 {
            f(first + w, bits);
        }
    }
}

/// Calls `f(entry)` for every bit set in `bits`, word `w` of a bitmap.
fn for_each_bit(w: usize, mut bits: u64, mut f: impl FnMut(u64)) {
    while bits != 0 {
        f(w as u64 * 64 + bits.trailing_zeros() as u64);
        bits &= bits - 1;
    }
}

/// The buffers and decompression context of one thread reading a log: a segment's records are
/// read without allocating.
pub struct LogScratch {
    words: Vec<u8>,
    won: Vec<u8>,
    dctx: zstd::bulk::Decompressor<'static>,
}

impl LogScratch {
    pub fn new() -> io::Result<LogScratch> {
        Ok(LogScratch {
            words: Vec::new(),
            won: Vec::new(),
            dctx: zstd::bulk::Decompressor::new()?,
        })
    }
}

impl Drop for DepthReader {
    fn drop(&mut self) {
        self.map = None;
        let _ = std::fs::remove_file(&self.path);
    }
}
