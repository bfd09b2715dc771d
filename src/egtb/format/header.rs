//! A file's 256-byte header: what it holds (endgame, metric, encoding, compression, flags),
//! where each side's blocks lie, its depths and checksums; the errors of reading and writing.

use super::value::{Metric, ENCODING_DEPTH};
use crate::egtb::material::Material;
use std::io;
use std::path::PathBuf;

pub const MAGIC: [u8; 8] = *b"FORTEGTB";
/// Format 2 added zstd blocks and the header's flags, format 3 the DTZ50 file's depths by
/// span (`SPAN_LOG2`); files of formats 1 and 2 are still read.
pub const FORMAT_VERSION: u32 = 3;
pub const HEADER_LEN: usize = 256;
pub const BLOCK_SIZE: usize = 8192;
/// Index scheme: Nalimov's, as `egtb::index` implements it.
pub const SCHEME_NALIMOV: u8 = 1;
pub const COMPRESSION_NONE: u8 = 0;
/// Each block compressed alone with LZ4 (block format), or stored raw when that is no smaller.
pub const COMPRESSION_LZ4: u8 = 1;
/// Each block compressed alone with zstd (one frame), or stored raw when that is no smaller.
pub const COMPRESSION_ZSTD: u8 = 2;
/// zstd's level for table blocks: on 8 KiB blocks of table values higher levels gain little
/// and cost much writing time (`docs/benchmarks.md`).
pub(super) const ZSTD_LEVEL: i32 = 6;
/// The shortest match the writer looks for, in place of the level's 4 bytes: table values come
/// in long runs, and short matches cost more to find and to code than they save. KQRKBN's
/// DTM blocks: 2.3% fewer bytes in 0.78 of the time (`docs/benchmarks.md`).
pub(super) const ZSTD_MIN_MATCH: u32 = 6;
/// Header flags (byte 38; 0 in format 1).
/// Broken entries hold the value of the entry before them, not the broken mark.
pub const FLAG_BROKEN_UNMARKED: u8 = 1;
/// A DTZ50 file of differences from the endgame's DTZ file: 0 for DTZ's value, v + 1 for v.
pub const FLAG_DTZ_DELTA: u8 = 2;
/// A DTZ50 file of differences that are all 0: DTZ50 is DTZ.
pub const FLAG_EQUALS_DTZ: u8 = 4;
pub(super) const KNOWN_FLAGS: u8 = FLAG_BROKEN_UNMARKED | FLAG_DTZ_DELTA | FLAG_EQUALS_DTZ;
/// Raw blocks written per step of the compressing writer (2 MiB at a time in memory).
pub(super) const WRITE_GROUP: usize = 256;
/// Recorded in every header as the generator version.
pub const GENERATOR_VERSION: &str = concat!("fortress ", env!("CARGO_PKG_VERSION"));

pub(super) const HALF_SLOT: usize = 48; // 4 x u64 per half, at offsets 48 (wtm) and 80 (btm)
pub(super) const OFF_GENERATOR: usize = 112;
pub(super) const OFF_CREATED: usize = 144;
pub(super) const OFF_PAYLOAD_LEN: usize = 152;
pub(super) const OFF_PAYLOAD_HASH: usize = 160;
/// A DTZ50 file's largest depth of each half, both sides to move even where the file keeps
/// one: a u16 per half (wtm, btm), depth + 1, 0 where not recorded (files written before).
pub(super) const OFF_MAX_DEPTHS: usize = 168;
/// A DTZ50 file's depths by span (format 3): log2 of the entries a byte stands for (0: none),
/// then per half (wtm, btm) the offset and length of its bytes (2 x u64 each; 0, 0: none).
pub(super) const OFF_SPAN_LOG2: usize = 172;
pub(super) const OFF_SPANS: usize = 176;
/// Entries of a half that one byte of a DTZ50 file's depths by span stands for: the deepest
/// DTZ50 among them. A verdict at a running counter reads no value where the byte leaves
/// room (KRBKR, the side left out: 89% of its wins at 20 plies on the counter, against 84%
/// with a byte per 24,576 and 93% per 1,024 entries; `docs/benchmarks.md`).
pub const SPAN_LOG2: u32 = 12;
pub(super) const OFF_HEADER_HASH: usize = 248;

/// Why a table file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{}: i/o error: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// The file is shorter than its header says (or than a header).
    #[error("{}: truncated: {found} bytes, the header says {expected}", path.display())]
    Truncated {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error("{}: bad magic: not a Fortress table file", path.display())]
    BadMagic { path: PathBuf },
    /// Written by a newer format than this program reads.
    #[error("{}: newer version: format {found}, this program reads up to {supported}", path.display())]
    NewerVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// The payload's checksum differs from the header's.
    #[error("{}: checksum mismatch: header says {stored:016x}, payload hashes to {computed:016x}", path.display())]
    ChecksumMismatch {
        path: PathBuf,
        stored: u64,
        computed: u64,
    },
    /// The file holds another endgame or metric than the one asked for.
    #[error("{}: wrong endgame: expected {expected}, file holds {found}", path.display())]
    WrongEndgame {
        path: PathBuf,
        expected: String,
        found: String,
    },
    /// The header is inconsistent (its own checksum, a field out of range, sizes that do not
    /// add up).
    #[error("{}: corrupt header: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },
    /// The writer was given values the format cannot hold (or halves that do not fit).
    #[error("cannot write table: {0}")]
    BadInput(String),
}

/// Conventional file name of an endgame's table for a metric: `KQKR.dtm.ftb`.
pub fn file_name(material: &Material, metric: Metric) -> String {
    format!("{}.{}.ftb", material.canonical().0, metric.name())
}

/// What the header of a file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableHeader {
    pub version: u32,
    pub endgame: String,
    pub metric: Metric,
    pub encoding: u8,
    /// Bytes per value: 1 or 2.
    pub value_width: u8,
    pub compression: u8,
    /// `FLAG_*` bits.
    pub flags: u8,
    pub scheme: u8,
    pub block_size: u32,
    /// Entries per half (None: half not stored).
    pub entries: [Option<u64>; 2],
    pub generator: String,
    /// Seconds since the Unix epoch.
    pub created: u64,
    pub payload_len: u64,
    pub payload_hash: u64,
    /// The largest depth in plies of each half (`Half as usize`), of both sides to move even
    /// where the file keeps one, where recorded (DTZ50 files as `gentb` writes them).
    pub max_depths: [Option<u16>; 2],
    /// Where each half's depths by span lie in the file (offset, bytes), where recorded
    /// (DTZ50 files of format 3): a byte per 2^`SPAN_LOG2` entries, the deepest DTZ50 win or
    /// loss among them in plies (0 if none), both sides to move even where the file keeps one.
    pub depth_spans: [Option<(u64, u64)>; 2],
}

impl TableHeader {
    /// The compression's name, as `tbinfo` reports it.
    pub fn compression_name(&self) -> &'static str {
        match self.compression {
            COMPRESSION_LZ4 => "lz4",
            COMPRESSION_ZSTD => "zstd",
            _ => "none",
        }
    }

    /// Do broken entries hold the broken mark? (Else only the index tells them.)
    pub fn marks_broken(&self) -> bool {
        self.flags & FLAG_BROKEN_UNMARKED == 0
    }

    /// Is this a DTZ50 file of differences from the DTZ file?
    pub fn is_dtz_delta(&self) -> bool {
        self.flags & FLAG_DTZ_DELTA != 0
    }

    /// Does each entry hold its depth alone, its result in the WDL file (`ENCODING_DEPTH`)?
    pub fn is_depth_coded(&self) -> bool {
        self.encoding == ENCODING_DEPTH
    }
}

#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Section {
    pub(super) entries: u64,
    pub(super) offset: u64,
    pub(super) len: u64,
    pub(super) blocks: u64,
}

pub(super) fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
pub(super) fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
pub(super) fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
pub(super) fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
pub(super) fn put_str(b: &mut [u8], at: usize, len: usize, s: &str) {
    let bytes = s.as_bytes();
    let n = bytes.len().min(len);
    b[at..at + n].copy_from_slice(&bytes[..n]);
}
pub(super) fn get_str(b: &[u8], at: usize, len: usize) -> String {
    let raw = &b[at..at + len];
    let end = raw.iter().position(|&c| c == 0).unwrap_or(len);
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// How the blocks of a file are stored.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Compression {
    None,
    Lz4,
    Zstd,
}

impl Compression {
    pub(super) fn code(self) -> u8 {
        match self {
            Compression::None => COMPRESSION_NONE,
            Compression::Lz4 => COMPRESSION_LZ4,
            Compression::Zstd => COMPRESSION_ZSTD,
        }
    }
}
