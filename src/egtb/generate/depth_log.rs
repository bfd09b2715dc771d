//! The entries each pass of `bitmaps` resolved, kept on disk: after pass n the bitmap of the
//! entries resolved at depth n + 1, per half, cut into segments of `SEGMENT` entries, the
//! empty ones left out and the rest compressed; at the end, the bitmap of the won entries. The
//! solve then needs no value per entry in memory, nor its bits once it is over; the values are
//! put together at the end, one segment at a time (`DepthReader::for_each_resolved`), from
//! the few passes that touched it.

use super::bitmaps::Bits;
use crate::egtb::index::Half;
use memmap2::Mmap;
use rayon::prelude::*;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

/// Entries a record covers (a multiple of 64: whole words of a bitmap).
pub const SEGMENT: u64 = 1 << 20;
const SEGMENT_WORDS: usize = (SEGMENT / 64) as usize;

/// Fast compression: the records are written once and read once, and most are sparse.
const LEVEL: i32 = 1;

/// The depth that marks the records of won entries.
const WON: u16 = u16::MAX;

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
    pub fn append(&mut self, half: Half, depth: u16, bits: &Bits) -> io::Result<()> {
        debug_assert!(depth != WON);
        self.write(half, depth, bits)
    }

    /// Records which entries of half `half` are won.
    pub fn append_won(&mut self, half: Half, bits: &Bits) -> io::Result<()> {
        self.write(half, WON, bits)
    }

    fn write(&mut self, half: Half, depth: u16, bits: &Bits) -> io::Result<()> {
        // One raw buffer and one compression context per thread, not per segment: a pass of
        // a deep endgame writes thousands of records (KRBKNN's DTM: 446 passes).
        let parts: Vec<(u32, Vec<u8>)> = bits
            .words()
            .par_chunks(SEGMENT_WORDS)
            .enumerate()
            .map_init(
                || (Vec::new(), zstd::bulk::Compressor::new(LEVEL)),
                |(raw, compressor), (s, words)| {
                    let first = s * SEGMENT_WORDS;
                    if !bits.may_hold(first..first + words.len())
                        || words.iter().all(|w| w.load(Relaxed) == 0)
                    {
                        return None;
                    }
                    let compressor = match compressor {
                        Ok(c) => c,
                        Err(e) => return Some(Err(io::Error::new(e.kind(), e.to_string()))),
                    };
                    raw.clear();
                    raw.extend(words.iter().flat_map(|w| w.load(Relaxed).to_le_bytes()));
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
            if depth != WON {
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
        for r in records.filter(|r| r.depth != WON) {
            let src = &map[r.offset as usize..r.offset as usize + r.len as usize];
            words.resize(SEGMENT_WORDS * 8, 0);
            let n = dctx.decompress_to_buffer(src, words)?;
            for (w, chunk) in words[..n].chunks_exact(8).enumerate() {
                let mut bits = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                while bits != 0 {
                    let k = w as u64 * 64 + bits.trailing_zeros() as u64;
                    bits &= bits - 1;
                    f(
                        segment * SEGMENT + k,
                        r.depth,
                        won[(k / 8) as usize] >> (k % 8) & 1 != 0,
                    );
                }
            }
        }
        Ok(())
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
