//! Table files: one self-identifying file per endgame and metric (as Bourzutschky, Tamplin and
//! Haworth 2005, Section 6, recommend), values in 8 KiB blocks behind a block table, each block
//! stored raw or compressed alone (zstd; LZ4 in files of format 1) and read through the
//! per-thread block cache (`blockcache`; Nalimov et al. 2001, Section 3.6). Two choices make the
//! files small (measured in `docs/benchmarks.md`): broken entries hold the value before them
//! instead of a mark (the index knows which entries are broken), and a DTZ50 file holds only its
//! differences from the DTZ file (BTH 2005, Table 2: DTZ50 differs from DTZ in a fraction of a
//! percent of the positions). The exact byte layout is documented in `tables/README.md`.
//!
//! Files are written to a temporary name in the same directory, synced, then renamed (and the
//! directory synced), so a crash never leaves a file that looks complete. Readers map the file
//! with `memmap2` and check the header and the payload's xxh3-64 checksum on open.

use super::blockcache::{block_key, new_file_id, with_block};
use super::index::Half;
use super::material::Material;
use memmap2::Mmap;
use rayon::prelude::*;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

pub const MAGIC: [u8; 8] = *b"FORTEGTB";
/// Format 2 added zstd blocks and the header's flags, format 3 the DTZ50 file's depths by
/// span (`SPAN_LOG2`); files of formats 1 and 2 are still read.
pub const FORMAT_VERSION: u32 = 3;
pub const HEADER_LEN: usize = 256;
pub const BLOCK_SIZE: usize = 8192;
/// The value encoding of `TbValue` (0 broken, 1 draw, 2n win in n, 2n + 3 loss in n).
pub const ENCODING_WDL_DEPTH: u8 = 1;
/// The value encoding of a WDL file: `Wdl5::code` (1 loss to 5 win, 0 broken).
pub const ENCODING_WDL5: u8 = 2;
/// The value encoding of a distance file whose results are the endgame's WDL file's: each
/// entry holds its depth n alone (win or loss in n), a draw the depth before it. Wins, draws
/// and losses interleaved cost the coder nothing then (`from_depth` decodes).
pub const ENCODING_DEPTH: u8 = 3;
/// The value encoding of a WDL file of format 2 as `gentb` writes it: `Wdl5::code` packed three
/// to a byte, base 5 (`Packing::Base5`).
pub const ENCODING_WDL5_PACKED: u8 = 4;
/// Index scheme: Nalimov's, as `egtb::index` implements it.
pub const SCHEME_NALIMOV: u8 = 1;
pub const COMPRESSION_NONE: u8 = 0;
/// Each block compressed alone with LZ4 (block format), or stored raw when that is no smaller.
pub const COMPRESSION_LZ4: u8 = 1;
/// Each block compressed alone with zstd (one frame), or stored raw when that is no smaller.
pub const COMPRESSION_ZSTD: u8 = 2;
/// zstd's level for table blocks: on 8 KiB blocks of table values higher levels gain little
/// and cost much writing time (`docs/benchmarks.md`).
const ZSTD_LEVEL: i32 = 6;
/// The shortest match the writer looks for, in place of the level's 4 bytes: table values come
/// in long runs, and short matches cost more to find and to code than they save. KQRKBN's
/// DTM blocks: 2.3% fewer bytes in 0.78 of the time (`docs/benchmarks.md`).
const ZSTD_MIN_MATCH: u32 = 6;
/// Header flags (byte 38; 0 in format 1).
/// Broken entries hold the value of the entry before them, not the broken mark.
pub const FLAG_BROKEN_UNMARKED: u8 = 1;
/// A DTZ50 file of differences from the endgame's DTZ file: 0 for DTZ's value, v + 1 for v.
pub const FLAG_DTZ_DELTA: u8 = 2;
/// A DTZ50 file of differences that are all 0: DTZ50 is DTZ.
pub const FLAG_EQUALS_DTZ: u8 = 4;
const KNOWN_FLAGS: u8 = FLAG_BROKEN_UNMARKED | FLAG_DTZ_DELTA | FLAG_EQUALS_DTZ;
/// Raw blocks written per step of the compressing writer (2 MiB at a time in memory).
const WRITE_GROUP: usize = 256;
/// Recorded in every header as the generator version.
pub const GENERATOR_VERSION: &str = concat!("fortress ", env!("CARGO_PKG_VERSION"));

const HALF_SLOT: usize = 48; // 4 x u64 per half, at offsets 48 (wtm) and 80 (btm)
const OFF_GENERATOR: usize = 112;
const OFF_CREATED: usize = 144;
const OFF_PAYLOAD_LEN: usize = 152;
const OFF_PAYLOAD_HASH: usize = 160;
/// A DTZ50 file's largest depth of each half, both sides to move even where the file keeps
/// one: a u16 per half (wtm, btm), depth + 1, 0 where not recorded (files written before).
const OFF_MAX_DEPTHS: usize = 168;
/// A DTZ50 file's depths by span (format 3): log2 of the entries a byte stands for (0: none),
/// then per half (wtm, btm) the offset and length of its bytes (2 x u64 each; 0, 0: none).
const OFF_SPAN_LOG2: usize = 172;
const OFF_SPANS: usize = 176;
/// Entries of a half that one byte of a DTZ50 file's depths by span stands for: the deepest
/// DTZ50 among them. A verdict at a running counter reads no value where the byte leaves
/// room (KRBKR, the side left out: 89% of its wins at 20 plies on the counter, against 84%
/// with a byte per 24,576 and 93% per 1,024 entries; `docs/benchmarks.md`).
pub const SPAN_LOG2: u32 = 12;
const OFF_HEADER_HASH: usize = 248;

/// The depth metric a file holds.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Metric {
    /// Distance to mate, in winner's moves.
    Dtm = 1,
    /// Distance to zeroing (capture or pawn move) under optimal play to mate.
    Dtz = 2,
    /// Distance to zeroing with the 50-move rule in force.
    Dtz50 = 3,
    /// No distance: the result with the 50-move rule's cursed wins and blessed losses
    /// (`Wdl5`), which DTM and DTZ50 give too; its file lets a probe that wants no more read
    /// one value, and is small.
    Wdl = 4,
}

impl Metric {
    /// The three distance metrics, each in a file of every endgame.
    pub const ALL: [Metric; 3] = [Metric::Dtm, Metric::Dtz, Metric::Dtz50];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Dtm => "dtm",
            Metric::Dtz => "dtz",
            Metric::Dtz50 => "dtz50",
            Metric::Wdl => "wdl",
        }
    }

    fn from_code(c: u8) -> Option<Metric> {
        [Metric::Dtm, Metric::Dtz, Metric::Dtz50, Metric::Wdl]
            .into_iter()
            .find(|m| *m as u8 == c)
    }

    /// Can this metric's files have value encoding `encoding` (in a file of `version`)?
    fn allows(self, encoding: u8, version: u32) -> bool {
        match self {
            Metric::Wdl => {
                encoding == ENCODING_WDL5 || encoding == ENCODING_WDL5_PACKED && version > 1
            }
            _ => encoding == ENCODING_WDL_DEPTH || encoding == ENCODING_DEPTH && version > 1,
        }
    }
}

/// The result of a position for the side to move with the 50-move rule in force, from a fresh
/// counter, in Syzygy's five values: a cursed win is a win that needs more than the rule
/// allows (a draw under the rule), a blessed loss the same for the side that loses it. Ordered
/// from worst to best.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wdl5 {
    Loss,
    BlessedLoss,
    Draw,
    CursedWin,
    Win,
}

impl Wdl5 {
    const ALL: [Wdl5; 5] = [
        Wdl5::Loss,
        Wdl5::BlessedLoss,
        Wdl5::Draw,
        Wdl5::CursedWin,
        Wdl5::Win,
    ];

    /// The result of an entry whose DTM and DTZ50 values are `dtm` and `dtz50`; None for a
    /// broken entry.
    pub fn of(dtm: TbValue, dtz50: TbValue) -> Option<Wdl5> {
        Some(match (dtm.outcome(), dtz50.outcome()) {
            (Outcome::Broken, _) | (_, Outcome::Broken) => return None,
            (_, Outcome::Win(_)) => Wdl5::Win,
            (_, Outcome::Loss(_)) => Wdl5::Loss,
            (Outcome::Win(_), _) => Wdl5::CursedWin,
            (Outcome::Loss(_), _) => Wdl5::BlessedLoss,
            _ => Wdl5::Draw,
        })
    }

    /// Its code in a WDL file: 1 (loss) to 5 (win); 0 is a broken entry's mark.
    pub fn code(self) -> u16 {
        self as u16 + 1
    }

    /// The result of a WDL file's code; None for 0 (broken) and codes out of range.
    pub fn from_code(code: u16) -> Option<Wdl5> {
        Wdl5::ALL.get((code as usize).checked_sub(1)?).copied()
    }

    /// The result a metric counts: DTZ50's with the 50-move rule, DTM's and DTZ's without.
    pub fn under(self, metric: Metric) -> Wdl5 {
        if metric == Metric::Dtz50 {
            self
        } else {
            self.without_rule()
        }
    }

    /// The result when the 50-move rule is not applied.
    pub fn without_rule(self) -> Wdl5 {
        match self {
            Wdl5::CursedWin => Wdl5::Win,
            Wdl5::BlessedLoss => Wdl5::Loss,
            other => other,
        }
    }
}

/// One entry's value: broken, draw, or a win or loss with its depth in moves of the metric
/// (for DTM, winner's moves; a side already mated has a loss in 0).
/// Stored as its encoding: 0 broken, 1 draw, 2n win in n (n >= 1), 2n + 3 loss in n (n >= 0).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct TbValue(u16);

/// A value taken apart.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Outcome {
    Broken,
    Draw,
    Win(u16),
    Loss(u16),
}

/// The value of a depth-coded entry (`ENCODING_DEPTH`) of `metric` whose result (the WDL
/// file's) is `result` and whose stored depth is `depth`.
#[inline]
pub fn from_depth(metric: Metric, result: Wdl5, depth: u16) -> TbValue {
    match result.under(metric) {
        Wdl5::Win => TbValue(2 * depth),
        Wdl5::Loss => TbValue(2 * depth + 3),
        _ => TbValue::DRAW,
    }
}

impl TbValue {
    pub const BROKEN: TbValue = TbValue(0);
    pub const DRAW: TbValue = TbValue(1);
    /// The largest depth a win can have (32767 moves).
    pub const MAX_WIN: u16 = (u16::MAX - 1) / 2;
    /// The largest depth a loss can have (32766 moves).
    pub const MAX_LOSS: u16 = (u16::MAX - 3) / 2;

    /// Win in `n` >= 1 moves; None if `n` is 0 or above `MAX_WIN`.
    pub fn win(n: u16) -> Option<TbValue> {
        (1..=Self::MAX_WIN).contains(&n).then(|| TbValue(2 * n))
    }

    /// Loss in `n` >= 0 moves; None above `MAX_LOSS`.
    pub fn loss(n: u16) -> Option<TbValue> {
        (n <= Self::MAX_LOSS).then(|| TbValue(2 * n + 3))
    }

    pub fn outcome(self) -> Outcome {
        match self.0 {
            0 => Outcome::Broken,
            1 => Outcome::Draw,
            v if v % 2 == 0 => Outcome::Win(v / 2),
            v => Outcome::Loss((v - 3) / 2),
        }
    }

    /// The stored encoding.
    pub fn raw(self) -> u16 {
        self.0
    }

    pub fn from_raw(v: u16) -> TbValue {
        TbValue(v)
    }
}

impl fmt::Debug for TbValue {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{:?}", self.outcome())
    }
}

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
struct Section {
    entries: u64,
    offset: u64,
    len: u64,
    blocks: u64,
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn put_str(b: &mut [u8], at: usize, len: usize, s: &str) {
    let bytes = s.as_bytes();
    let n = bytes.len().min(len);
    b[at..at + n].copy_from_slice(&bytes[..n]);
}
fn get_str(b: &[u8], at: usize, len: usize) -> String {
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
    fn code(self) -> u8 {
        match self {
            Compression::None => COMPRESSION_NONE,
            Compression::Lz4 => COMPRESSION_LZ4,
            Compression::Zstd => COMPRESSION_ZSTD,
        }
    }
}

/// What the generator hands the writer.
pub struct TableSpec<'a> {
    pub material: Material,
    pub metric: Metric,
    /// The values of each stored half, in index order (see `EndgameIndex::stored_halves`).
    pub halves: &'a [(Half, &'a [TbValue])],
    pub compression: Compression,
    /// Store broken entries as the value before them (the reader must then take the broken
    /// entries from the index, as every prober does).
    pub unmark_broken: bool,
    /// Store a DTZ50 file as its differences from this DTZ file of the same endgame.
    pub delta_of: Option<&'a TableFile>,
    /// Store depths alone (`ENCODING_DEPTH`; broken entries unmarked).
    pub depths: bool,
}

fn flags(unmark_broken: bool, delta: bool, equals_dtz: bool) -> u8 {
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
fn depth_of(v: TbValue) -> Option<u16> {
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
fn block_codes(
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
enum Packing {
    /// One byte a value.
    Byte,
    /// Two bytes a value, little-endian.
    Word,
    /// Three values a byte in base 5, the first the lowest digit: a WDL file's codes 1 to 5
    /// as digits 0 to 4. The coder then sees a third of the bytes, and each carries more.
    Base5,
}

const POW5: [u8; 3] = [1, 5, 25];

impl Packing {
    fn of(encoding: u8, width: usize) -> Packing {
        match (encoding, width) {
            (ENCODING_WDL5_PACKED, _) => Packing::Base5,
            (_, 1) => Packing::Byte,
            _ => Packing::Word,
        }
    }

    /// Values a block holds.
    fn per_block(self) -> usize {
        match self {
            Packing::Byte => BLOCK_SIZE,
            Packing::Word => BLOCK_SIZE / 2,
            Packing::Base5 => BLOCK_SIZE * 3,
        }
    }

    /// Value `i` of a block's bytes.
    #[inline(always)]
    fn read(self, bytes: &[u8], i: usize) -> TbValue {
        TbValue(match self {
            Packing::Byte => bytes[i] as u16,
            Packing::Word => u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]),
            Packing::Base5 => (bytes[i / 3] / POW5[i % 3] % 5) as u16 + 1,
        })
    }

    /// One block of codes, padded with zeros.
    fn pack(self, codes: &[u16]) -> Vec<u8> {
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
fn unpack_block(compression: u8, src: &[u8], buf: &mut [u8]) -> bool {
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
fn store_block(raw: Vec<u8>, compression: Compression) -> io::Result<Vec<u8>> {
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

/// Writes `spec` as `dir/<file_name>` atomically (temporary file, fsync, rename, fsync of the
/// directory) and returns the path. The value width is the smallest that holds every value.
pub fn write_table(dir: &Path, spec: &TableSpec) -> Result<PathBuf, TableError> {
    let mut seen = [false; 2];
    for (h, _) in spec.halves {
        if std::mem::replace(&mut seen[*h as usize], true) {
            return Err(TableError::BadInput(format!(
                "half {} given twice",
                h.name()
            )));
        }
    }
    let canon = spec.material.canonical().0;
    if let Some(dtz) = spec.delta_of {
        let h = dtz.header();
        if spec.metric != Metric::Dtz50 || h.metric != Metric::Dtz || h.endgame != canon.to_string()
        {
            return Err(TableError::BadInput(format!(
                "a {} file of {canon} cannot be stored as differences from {}",
                spec.metric.name(),
                dtz.path().display()
            )));
        }
    }
    let max_raw = spec
        .halves
        .iter()
        .flat_map(|(_, v)| v.iter())
        .map(|v| v.raw())
        .max()
        .unwrap_or(0);
    let halves: Vec<Half> = Half::BOTH
        .into_iter()
        .filter(|h| seen[*h as usize])
        .collect();
    let mut writer = TableWriter::create(
        dir,
        &FileSpec {
            material: spec.material,
            metric: spec.metric,
            halves: &halves,
            max_raw,
            compression: spec.compression,
            unmark_broken: spec.unmark_broken,
            delta: spec.delta_of.is_some(),
            depths: spec.depths,
        },
    )?;
    let group = writer.per_block() * WRITE_GROUP;
    let mut dtz_values = Vec::new();
    for &half in &halves {
        let (_, values) = spec.halves.iter().find(|(h, _)| *h == half).expect("seen");
        writer.begin_half(half, values.len() as u64)?;
        for (g, chunk) in values.chunks(group).enumerate() {
            let dtz = spec.delta_of.map(|dtz| {
                let first = (g * group) as u64;
                dtz_values.clear();
                dtz_values.par_extend(
                    (0..chunk.len() as u64)
                        .into_par_iter()
                        .map(|i| dtz.value(half, first + i).unwrap_or(TbValue::BROKEN)),
                );
                &dtz_values[..]
            });
            writer.push(chunk, dtz)?;
        }
        writer.end_half()?;
    }
    writer.finish()
}

/// What a table file being written will hold (`TableWriter`).
pub struct FileSpec<'a> {
    pub material: Material,
    pub metric: Metric,
    /// The halves to be written, in index order.
    pub halves: &'a [Half],
    /// The largest value that will be written: it sets the width of an entry.
    pub max_raw: u16,
    pub compression: Compression,
    /// Store broken entries as the value before them (`TableSpec::unmark_broken`).
    pub unmark_broken: bool,
    /// A DTZ50 file stored as its differences from DTZ's values, which `push` is given.
    pub delta: bool,
    /// Store depths alone (`ENCODING_DEPTH`): a reader takes the results from the WDL file.
    pub depths: bool,
}

/// A table file written in index order, a piece at a time: `write_table` hands it whole
/// halves, the six-man generator one king block after another (a six-man half is never held
/// whole). Dropped unfinished, it removes its temporary file.
pub struct TableWriter {
    dir: PathBuf,
    path: PathBuf,
    tmp: PathBuf,
    header: [u8; HEADER_LEN],
    out: BufWriter<File>,
    compression: Compression,
    unmark_broken: bool,
    delta: bool,
    depths: bool,
    packing: Packing,
    /// The halves still to be written, in order.
    halves: Vec<Half>,
    /// Where the next half's section starts.
    offset: u64,
    open: Option<OpenHalf>,
    differs_from_dtz: bool,
    /// Depths by span of each half (`record_depth_spans`), written after the sections.
    spans: [Vec<u8>; 2],
    finished: bool,
}

/// The half a `TableWriter` is writing.
struct OpenHalf {
    half: Half,
    entries: u64,
    pushed: u64,
    /// The block table to be: each stored block's offset from the section's start.
    table: Vec<u8>,
    at: u64,
    /// Values (and DTZ's) of a block not yet whole.
    pending: Vec<TbValue>,
    pending_dtz: Vec<TbValue>,
}

impl TableWriter {
    /// Starts `dir/<file_name>` under a temporary name.
    pub fn create(dir: &Path, spec: &FileSpec) -> Result<TableWriter, TableError> {
        let (canon, flipped) = spec.material.canonical();
        if flipped {
            return Err(TableError::BadInput(format!(
                "{} is not in canonical colouring ({canon})",
                spec.material
            )));
        }
        if spec.depths && (!spec.unmark_broken || spec.metric == Metric::Wdl) {
            return Err(TableError::BadInput(
                "depth-coded files hold distances and leave broken entries unmarked".into(),
            ));
        }
        // A difference code is the value plus one; a depth is at most half the value.
        let max_code = if spec.depths {
            spec.max_raw as u32 / 2
        } else {
            spec.max_raw as u32
        } + spec.delta as u32;
        if max_code > u16::MAX as u32 {
            return Err(TableError::BadInput(format!(
                "value {} cannot be stored as a difference",
                spec.max_raw
            )));
        }
        let width: usize = if max_code <= u8::MAX as u32 { 1 } else { 2 };
        let name = file_name(&canon, spec.metric);
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(&MAGIC);
        put_u32(&mut header, 8, FORMAT_VERSION);
        put_u32(&mut header, 12, HEADER_LEN as u32);
        put_str(&mut header, 16, 16, &canon.to_string());
        header[32] = spec.metric as u8;
        let encoding = match spec.metric {
            Metric::Wdl => ENCODING_WDL5_PACKED,
            _ if spec.depths => ENCODING_DEPTH,
            _ => ENCODING_WDL_DEPTH,
        };
        header[33] = encoding;
        header[34] = width as u8;
        header[35] = spec.halves.iter().map(|h| 1u8 << *h as u8).sum();
        header[36] = spec.compression.code();
        header[37] = SCHEME_NALIMOV;
        put_u32(&mut header, 40, BLOCK_SIZE as u32);
        // Read as well as written: the checksum is taken from the file as written.
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|source| TableError::Io {
                path: tmp.clone(),
                source,
            })?;
        let mut writer = TableWriter {
            dir: dir.to_path_buf(),
            path: dir.join(&name),
            tmp,
            header,
            out: BufWriter::with_capacity(1 << 20, file),
            compression: spec.compression,
            unmark_broken: spec.unmark_broken,
            delta: spec.delta,
            depths: spec.depths,
            packing: Packing::of(encoding, width),
            halves: spec.halves.to_vec(),
            offset: HEADER_LEN as u64,
            open: None,
            differs_from_dtz: false,
            spans: [Vec::new(), Vec::new()],
            finished: false,
        };
        // A placeholder until the payload is known.
        let placeholder = writer.header;
        writer.io(|out| out.write_all(&placeholder))?;
        Ok(writer)
    }

    /// Entries a block holds.
    pub fn per_block(&self) -> usize {
        self.packing.per_block()
    }

    fn io<T>(
        &mut self,
        f: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
    ) -> Result<T, TableError> {
        f(&mut self.out).map_err(|source| TableError::Io {
            path: self.tmp.clone(),
            source,
        })
    }

    /// Starts the next half, of `entries` entries.
    pub fn begin_half(&mut self, half: Half, entries: u64) -> Result<(), TableError> {
        if self.open.is_some() || self.halves.first() != Some(&half) {
            return Err(TableError::BadInput(format!(
                "half {} is not the next to write",
                half.name()
            )));
        }
        self.halves.remove(0);
        let blocks = entries.div_ceil(self.per_block() as u64);
        let table_len = (blocks + 1) * 8;
        // The block table is written last, once the stored block lengths are known.
        self.io(|out| io::copy(&mut io::repeat(0).take(table_len), out))?;
        self.open = Some(OpenHalf {
            half,
            entries,
            pushed: 0,
            table: Vec::with_capacity(table_len as usize),
            at: table_len,
            pending: Vec::new(),
            pending_dtz: Vec::new(),
        });
        Ok(())
    }

    /// The next values of the open half (and, for a file of differences, DTZ's values of the
    /// same entries).
    pub fn push(&mut self, values: &[TbValue], dtz: Option<&[TbValue]>) -> Result<(), TableError> {
        let per_block = self.per_block();
        let Some(open) = self.open.as_mut() else {
            return Err(TableError::BadInput("no half is open".into()));
        };
        if dtz.map(<[TbValue]>::len) != self.delta.then_some(values.len())
            || open.pushed + values.len() as u64 > open.entries
        {
            return Err(TableError::BadInput(format!(
                "{} values do not fit half {}",
                values.len(),
                open.half.name()
            )));
        }
        open.pushed += values.len() as u64;
        let (mut values, mut dtz) = (values, dtz);
        if !open.pending.is_empty() {
            let take = (per_block - open.pending.len()).min(values.len());
            open.pending.extend_from_slice(&values[..take]);
            values = &values[take..];
            if let Some(d) = dtz {
                open.pending_dtz.extend_from_slice(&d[..take]);
                dtz = Some(&d[take..]);
            }
            if open.pending.len() < per_block {
                return Ok(());
            }
            self.write_pending()?;
        }
        let whole = values.len() / per_block * per_block;
        for (g, group) in values[..whole].chunks(per_block * WRITE_GROUP).enumerate() {
            let at = g * per_block * WRITE_GROUP;
            let stored = self.store_blocks(group, dtz.map(|d| &d[at..at + group.len()]))?;
            self.append(stored)?;
        }
        let open = self.open.as_mut().expect("open");
        open.pending.extend_from_slice(&values[whole..]);
        if let Some(d) = dtz {
            open.pending_dtz.extend_from_slice(&d[whole..]);
        }
        Ok(())
    }

    /// Stores the values of the block not yet whole (the open half's last, or one just made
    /// whole) and empties it.
    fn write_pending(&mut self) -> Result<(), TableError> {
        let open = self.open.as_ref().expect("open");
        let dtz = self.delta.then_some(&open.pending_dtz[..]);
        let stored = self.store_blocks(&open.pending, dtz)?;
        self.append(stored)?;
        let open = self.open.as_mut().expect("open");
        open.pending.clear();
        open.pending_dtz.clear();
        Ok(())
    }

    /// Codes, packs and compresses `values` (whole blocks but perhaps the last of a half) block
    /// by block in parallel: each stored block, and whether it tells DTZ50 from DTZ (`block_codes`).
    fn store_blocks(
        &self,
        values: &[TbValue],
        dtz: Option<&[TbValue]>,
    ) -> Result<Vec<(Vec<u8>, bool)>, TableError> {
        let per_block = self.per_block();
        values
            .par_chunks(per_block)
            .enumerate()
            .map(|(k, chunk)| {
                let mut codes = vec![0u16; chunk.len()];
                let dtz = dtz.map(|d| &d[k * per_block..k * per_block + chunk.len()]);
                let any = block_codes(chunk, dtz, self.unmark_broken, self.depths, &mut codes);
                Ok((
                    store_block(self.packing.pack(&codes), self.compression)?,
                    any,
                ))
            })
            .collect::<io::Result<Vec<_>>>()
            .map_err(|source| TableError::Io {
                path: self.tmp.clone(),
                source,
            })
    }

    /// Writes stored blocks after the open half's last.
    fn append(&mut self, stored: Vec<(Vec<u8>, bool)>) -> Result<(), TableError> {
        for (block, any) in stored {
            self.differs_from_dtz |= any;
            self.io(|out| out.write_all(&block))?;
            let open = self.open.as_mut().expect("open");
            open.table.extend_from_slice(&open.at.to_le_bytes());
            open.at += block.len() as u64;
        }
        Ok(())
    }

    /// Ends the open half, which must have had all its values.
    pub fn end_half(&mut self) -> Result<(), TableError> {
        let Some(open) = self.open.as_ref() else {
            return Err(TableError::BadInput("no half is open".into()));
        };
        if open.pushed != open.entries {
            return Err(TableError::BadInput(format!(
                "half {}: {} of {} values given",
                open.half.name(),
                open.pushed,
                open.entries
            )));
        }
        if !open.pending.is_empty() {
            self.write_pending()?;
        }
        let OpenHalf {
            half,
            entries,
            mut table,
            at,
            ..
        } = self.open.take().expect("open");
        table.extend_from_slice(&at.to_le_bytes());
        let offset = self.offset;
        let blocks = entries.div_ceil(self.per_block() as u64);
        self.io(|out| {
            out.seek(SeekFrom::Start(offset))?;
            out.write_all(&table)?;
            out.seek(SeekFrom::Start(offset + at))?;
            Ok(())
        })?;
        let slot = HALF_SLOT + 32 * half as usize;
        put_u64(&mut self.header, slot, entries);
        put_u64(&mut self.header, slot + 8, offset);
        put_u64(&mut self.header, slot + 16, at);
        put_u64(&mut self.header, slot + 24, blocks);
        self.offset += at;
        Ok(())
    }

    /// Says that DTZ50 differs from DTZ somewhere in this endgame, though not in the halves
    /// written (a file of one side to move): the flag `FLAG_EQUALS_DTZ` speaks of both.
    pub fn mark_differs_from_dtz(&mut self) {
        self.differs_from_dtz = true;
    }

    /// Records the largest depth in plies of each half (`Half as usize`), of both sides to move
    /// even where the file keeps one: a reader whose counter leaves room for it knows the
    /// 50-move rule spoils nothing without reading a value.
    pub fn record_max_depths(&mut self, depths: [u16; 2]) {
        for (h, d) in depths.into_iter().enumerate() {
            let at = OFF_MAX_DEPTHS + 2 * h;
            self.header[at..at + 2].copy_from_slice(&(d.saturating_add(1)).to_le_bytes());
        }
    }

    /// Records the depths by span of a half of the index (`tables::add_span_depths`), of both
    /// sides to move even where the file keeps one.
    pub fn record_depth_spans(&mut self, half: Half, depths: Vec<u8>) {
        self.spans[half as usize] = depths;
    }

    /// Checksums the file, writes its header and moves it to its name; returns the path.
    pub fn finish(mut self) -> Result<PathBuf, TableError> {
        if self.open.is_some() || !self.halves.is_empty() {
            return Err(TableError::BadInput("a half was not written".into()));
        }
        let spans = std::mem::take(&mut self.spans);
        let at = self.offset;
        let regions = put_spans(&mut self.header, at, &spans);
        self.io(|out| spans.iter().try_for_each(|s| out.write_all(s)))?;
        self.offset = regions;
        // Hash what is on disk, so the checksum covers the bytes a reader will see.
        let payload_hash = self.io(|out| {
            out.flush()?;
            let file = out.get_mut();
            file.seek(SeekFrom::Start(HEADER_LEN as u64))?;
            let mut hasher = Xxh3::new();
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = file.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
            }
            Ok(hasher.digest())
        })?;
        let header = &mut self.header;
        header[38] = flags(self.unmark_broken, self.delta, !self.differs_from_dtz);
        put_str(header, OFF_GENERATOR, 32, GENERATOR_VERSION);
        let created = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        put_u64(header, OFF_CREATED, created);
        put_u64(header, OFF_PAYLOAD_LEN, self.offset - HEADER_LEN as u64);
        put_u64(header, OFF_PAYLOAD_HASH, payload_hash);
        let hh = xxh3_64(&header[..OFF_HEADER_HASH]);
        put_u64(header, OFF_HEADER_HASH, hh);
        let header = self.header;
        self.io(|out| {
            out.flush()?;
            let file = out.get_mut();
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&header)?;
            file.sync_all()
        })?;
        rename_durably(&self.tmp, &self.path, &self.dir)?;
        self.finished = true;
        Ok(self.path.clone())
    }
}

/// Records in `header` depths by span (`spans`, a half's empty where none) laid out from file
/// offset `at`, wtm first; returns the offset after them.
fn put_spans<S: AsRef<[u8]>>(header: &mut [u8; HEADER_LEN], mut at: u64, spans: &[S; 2]) -> u64 {
    header[OFF_SPAN_LOG2..OFF_SPANS + 32].fill(0);
    for (h, s) in spans.iter().enumerate() {
        let n = s.as_ref().len() as u64;
        if n > 0 {
            header[OFF_SPAN_LOG2] = SPAN_LOG2 as u8;
            put_u64(header, OFF_SPANS + 16 * h, at);
            put_u64(header, OFF_SPANS + 16 * h + 8, n);
            at += n;
        }
    }
    at
}

/// Moves a synced temporary file `tmp` over `path` in `dir`, and makes the rename durable.
fn rename_durably(tmp: &Path, path: &Path, dir: &Path) -> Result<(), TableError> {
    let io_err = |p: &Path| {
        let p = p.to_path_buf();
        move |source| TableError::Io { path: p, source }
    };
    fs::rename(tmp, path).map_err(io_err(path))?;
    if let Ok(d) = File::open(dir) {
        d.sync_all().map_err(io_err(dir))?;
    }
    Ok(())
}

/// Rewrites the file at `path` with the section of `half` alone, atomically as the writer
/// writes: a distance metric stored for one side to move, whose other side a reader works out
/// by one ply (`egtb::one_ply`). The section's bytes are copied as they stand (its block table
/// counts from the section's start); the header and the payload's checksum are new.
pub fn keep_half(path: &Path, half: Half) -> Result<(), TableError> {
    let t = TableFile::open(path)?;
    let Some(s) = t.sections[half as usize] else {
        return Err(TableError::BadInput(format!(
            "{} holds no half {}",
            path.display(),
            half.name()
        )));
    };
    let section = &t.map[s.offset as usize..(s.offset + s.len) as usize];
    let mut header = [0u8; HEADER_LEN];
    header.copy_from_slice(&t.map[..HEADER_LEN]);
    header[35] = 1 << half as u8;
    header[HALF_SLOT..HALF_SLOT + 64].fill(0);
    let slot = HALF_SLOT + 32 * half as usize;
    put_u64(&mut header, slot, s.entries);
    put_u64(&mut header, slot + 8, HEADER_LEN as u64);
    put_u64(&mut header, slot + 16, s.len);
    put_u64(&mut header, slot + 24, s.blocks);
    let spans = t
        .header
        .depth_spans
        .map(|r| r.map_or(&[][..], |(at, n)| &t.map[at as usize..(at + n) as usize]));
    let end = put_spans(&mut header, HEADER_LEN as u64 + s.len, &spans);
    put_u64(&mut header, OFF_PAYLOAD_LEN, end - HEADER_LEN as u64);
    let mut hasher = Xxh3::new();
    hasher.update(section);
    spans.iter().for_each(|x| hasher.update(x));
    put_u64(&mut header, OFF_PAYLOAD_HASH, hasher.digest());
    let hh = xxh3_64(&header[..OFF_HEADER_HASH]);
    put_u64(&mut header, OFF_HEADER_HASH, hh);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(&header)?;
        f.write_all(section)?;
        spans.iter().try_for_each(|x| f.write_all(x))?;
        f.sync_all()
    });
    if let Err(source) = written {
        let _ = fs::remove_file(&tmp);
        return Err(TableError::Io { path: tmp, source });
    }
    drop(t);
    rename_durably(&tmp, path, dir)
}

impl Drop for TableWriter {
    fn drop(&mut self) {
        if !self.finished {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes a table file as the generator stores it: broken entries unmarked, and a DTZ50 file as
/// its differences from the DTZ file of the same endgame, which must be in `dir`. DTM is
/// depth-coded in zstd blocks at once. DTZ and DTZ50 hold values, uncompressed, until the WDL
/// file is written from them (`tables::write_wdl`) and `tables::finish_zeroing` depth-codes
/// and compresses them: the two are read twice and never kept, so compressing them first
/// would cost time for nothing.
pub fn write_compact(
    dir: &Path,
    material: &Material,
    metric: Metric,
    halves: &[(Half, &[TbValue])],
) -> Result<PathBuf, TableError> {
    let dtz = match metric {
        Metric::Dtz50 => Some(TableFile::open(
            &dir.join(file_name(material, Metric::Dtz)),
        )?),
        _ => None,
    };
    write_table(
        dir,
        &TableSpec {
            material: *material,
            metric,
            halves,
            compression: if metric == Metric::Dtm {
                Compression::Zstd
            } else {
                Compression::None
            },
            unmark_broken: true,
            delta_of: dtz.as_ref(),
            depths: metric == Metric::Dtm,
        },
    )
}

/// An open, verified table file.
pub struct TableFile {
    path: PathBuf,
    /// Names this file's blocks in the block cache.
    id: u64,
    map: Mmap,
    /// The decompressed blocks of each half, when `load` has been called.
    loaded: [Option<Vec<u8>>; 2],
    header: TableHeader,
    sections: [Option<Section>; 2],
    packing: Packing,
}

impl TableFile {
    /// Maps and verifies a file: magic, version, header checksum, sizes, payload checksum.
    pub fn open(path: &Path) -> Result<TableFile, TableError> {
        let p = path.to_path_buf();
        let file = File::open(path).map_err(|source| TableError::Io {
            path: p.clone(),
            source,
        })?;
        // SAFETY of the map: the file is only read, and table files are never modified in place
        // (writers create a new file and rename it over the old one), so the mapped bytes do not
        // change under us while the map lives.
        let map = unsafe { Mmap::map(&file) }.map_err(|source| TableError::Io {
            path: p.clone(),
            source,
        })?;
        let (header, sections) = parse_header(&p, &map)?;
        let computed = xxh3_64(&map[HEADER_LEN..]);
        if computed != header.payload_hash {
            return Err(TableError::ChecksumMismatch {
                path: p,
                stored: header.payload_hash,
                computed,
            });
        }
        let t = TableFile {
            path: p,
            id: new_file_id(),
            map,
            loaded: [None, None],
            packing: Packing::of(header.encoding, header.value_width as usize),
            header,
            sections,
        };
        t.check_block_tables()?;
        Ok(t)
    }

    /// Opens a file and checks it holds `material` (canonicalised) for `metric`.
    pub fn open_for(
        path: &Path,
        material: &Material,
        metric: Metric,
    ) -> Result<TableFile, TableError> {
        let t = TableFile::open(path)?;
        let want = material.canonical().0.to_string();
        if t.header.endgame != want || t.header.metric != metric {
            return Err(TableError::WrongEndgame {
                path: path.to_path_buf(),
                expected: format!("{want} {}", metric.name()),
                found: format!("{} {}", t.header.endgame, t.header.metric.name()),
            });
        }
        Ok(t)
    }

    pub fn header(&self) -> &TableHeader {
        &self.header
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries stored for a half (None: the half is not in this file).
    pub fn entries(&self, half: Half) -> Option<u64> {
        self.sections[half as usize].map(|s| s.entries)
    }

    /// Bytes of the section of a half (None: the half is not in this file).
    pub fn stored_bytes(&self, half: Half) -> Option<u64> {
        self.sections[half as usize].map(|s| s.len)
    }

    /// The deepest DTZ50 in plies among the entries of `idx`'s span of `half` (a DTZ50 file's
    /// depths by span), where recorded.
    #[inline]
    pub fn span_depth(&self, half: Half, idx: u64) -> Option<u16> {
        let (at, n) = self.header.depth_spans[half as usize]?;
        let k = idx >> SPAN_LOG2;
        (k < n).then(|| self.map[(at + k) as usize] as u16)
    }

    /// Bytes that `load` takes: every block decompressed (none for a file stored uncompressed,
    /// which is read where it is mapped).
    pub fn loaded_bytes(&self) -> u64 {
        if self.header.compression == COMPRESSION_NONE {
            return 0;
        }
        let blocks: u64 = self.sections.iter().flatten().map(|s| s.blocks).sum();
        blocks * BLOCK_SIZE as u64
    }

    /// The value of entry `idx` of `half`; None if the half is not stored or `idx` is out of
    /// range.
    #[inline]
    pub fn value(&self, half: Half, idx: u64) -> Option<TbValue> {
        let s = self.sections[half as usize]?;
        if idx >= s.entries {
            return None;
        }
        let per_block = self.packing.per_block() as u64;
        let (block, i) = ((idx / per_block) as usize, (idx % per_block) as usize);
        if self.header.compression == COMPRESSION_NONE {
            let at = (s.offset + (s.blocks + 1) * 8) as usize + block * BLOCK_SIZE;
            return Some(self.packing.read(&self.map[at..], i));
        }
        if let Some(d) = &self.loaded[half as usize] {
            return Some(self.packing.read(&d[block * BLOCK_SIZE..], i));
        }
        self.cached_value(&s, half, idx)
    }

    /// The value of entry `idx` of a DTZ50 file of differences (`is_dtz_delta`), read through
    /// the endgame's DTZ file.
    #[inline]
    pub fn value_over(&self, dtz: &TableFile, half: Half, idx: u64) -> Option<TbValue> {
        match self.value(half, idx)?.0 {
            0 => dtz.value(half, idx),
            code => Some(TbValue(code - 1)),
        }
    }

    /// The raw values of entries `range` of `half` appended to `out`, read block by block
    /// without the block cache: a scan of a whole file (one value each) gains nothing from it.
    /// None if the half is not stored, the range passes its end or a block does not
    /// decompress.
    pub fn read_range(
        &self,
        half: Half,
        range: std::ops::Range<u64>,
        out: &mut Vec<TbValue>,
    ) -> Option<()> {
        let s = self.sections[half as usize]?;
        if range.end > s.entries {
            return None;
        }
        let per_block = self.packing.per_block() as u64;
        let mut buf = [0u8; BLOCK_SIZE];
        let mut idx = range.start;
        while idx < range.end {
            let block = idx / per_block;
            let bytes: &[u8] = if let Some(d) = &self.loaded[half as usize] {
                &d[block as usize * BLOCK_SIZE..(block as usize + 1) * BLOCK_SIZE]
            } else if self.header.compression == COMPRESSION_NONE {
                let at = (s.offset + (s.blocks + 1) * 8) as usize + block as usize * BLOCK_SIZE;
                &self.map[at..(at + BLOCK_SIZE).min(self.map.len())]
            } else {
                if !self.unpack(&s, block, &mut buf) {
                    return None;
                }
                &buf
            };
            let end = range.end.min((block + 1) * per_block);
            for i in idx..end {
                out.push(self.packing.read(bytes, (i % per_block) as usize));
            }
            idx = end;
        }
        Some(())
    }

    /// A value of a compressed file, through the block cache (kept out of line so that the
    /// inlined paths above stay small).
    #[inline(never)]
    fn cached_value(&self, s: &Section, half: Half, idx: u64) -> Option<TbValue> {
        let per_block = self.packing.per_block() as u64;
        let block = idx / per_block;
        let at = (idx % per_block) as usize;
        with_block(
            block_key(self.id, half as usize, block),
            |buf| self.unpack(s, block, buf),
            |buf| self.packing.read(buf, at),
        )
    }

    /// Decompresses a compressed file whole into memory, for a reader that visits every entry
    /// many times (the verifier); uncompressed files are left to the page cache.
    pub fn load(&mut self) -> Result<(), TableError> {
        if self.header.compression == COMPRESSION_NONE {
            return Ok(());
        }
        for h in Half::BOTH {
            let Some(s) = self.sections[h as usize] else {
                continue;
            };
            let mut data = vec![0u8; s.blocks as usize * BLOCK_SIZE];
            let ok = data
                .par_chunks_mut(BLOCK_SIZE)
                .enumerate()
                .all(|(b, buf)| self.unpack(&s, b as u64, buf));
            if !ok {
                return Err(TableError::Corrupt {
                    path: self.path.clone(),
                    what: format!("a block of half {} does not decompress", h.name()),
                });
            }
            self.loaded[h as usize] = Some(data);
        }
        Ok(())
    }

    /// The stored bytes of block `b` of a section (offsets checked on open).
    fn stored_block(&self, s: &Section, b: u64) -> &[u8] {
        let at = |i: u64| (s.offset + get_u64(&self.map, (s.offset + 8 * i) as usize)) as usize;
        &self.map[at(b)..at(b + 1)]
    }

    /// Decompresses block `b` of a section into `buf`; false if it does not decompress to a
    /// whole block (impossible for a file whose checksum matched, unless the writer erred).
    fn unpack(&self, s: &Section, b: u64, buf: &mut [u8]) -> bool {
        unpack_block(self.header.compression, self.stored_block(s, b), buf)
    }

    /// Uncompressed: every block in its fixed place. Compressed: blocks in order, each 1 to
    /// `BLOCK_SIZE` bytes, the last ending where the section does.
    fn check_block_tables(&self) -> Result<(), TableError> {
        let raw = self.header.compression == COMPRESSION_NONE;
        for s in self.sections.iter().flatten() {
            let table_len = (s.blocks + 1) * 8;
            let mut prev = table_len;
            for b in 0..=s.blocks {
                let v = get_u64(&self.map, (s.offset + 8 * b) as usize);
                let step = v.wrapping_sub(prev);
                let sound = if raw {
                    v == table_len + b * BLOCK_SIZE as u64
                } else if b == 0 {
                    v == table_len
                } else {
                    (1..=BLOCK_SIZE as u64).contains(&step) && (b < s.blocks || v == s.len)
                };
                if !sound {
                    return Err(TableError::Corrupt {
                        path: self.path.clone(),
                        what: format!("block table entry {b} is {v}"),
                    });
                }
                prev = v;
            }
        }
        Ok(())
    }
}

fn parse_header(path: &Path, b: &[u8]) -> Result<(TableHeader, [Option<Section>; 2]), TableError> {
    let path = path.to_path_buf();
    let len = b.len() as u64;
    if b.len() >= 8 && b[..8] != MAGIC {
        return Err(TableError::BadMagic { path });
    }
    if b.len() < 12 {
        return Err(TableError::Truncated {
            path,
            expected: HEADER_LEN as u64,
            found: len,
        });
    }
    let version = get_u32(b, 8);
    if version > FORMAT_VERSION {
        return Err(TableError::NewerVersion {
            path,
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    if b.len() < HEADER_LEN {
        return Err(TableError::Truncated {
            path,
            expected: HEADER_LEN as u64,
            found: len,
        });
    }
    let corrupt = |what: String| TableError::Corrupt {
        path: path.clone(),
        what,
    };
    if get_u64(b, OFF_HEADER_HASH) != xxh3_64(&b[..OFF_HEADER_HASH]) {
        return Err(corrupt("header checksum does not match".into()));
    }
    if version == 0 || get_u32(b, 12) as usize != HEADER_LEN {
        return Err(corrupt(format!(
            "version {version}, header length {}",
            get_u32(b, 12)
        )));
    }
    let metric =
        Metric::from_code(b[32]).ok_or_else(|| corrupt(format!("metric code {}", b[32])))?;
    let (encoding, width, halves, compression, scheme) = (b[33], b[34], b[35], b[36], b[37]);
    if !metric.allows(encoding, version) {
        return Err(corrupt(format!("value encoding {encoding}")));
    }
    if width != 1 && width != 2 {
        return Err(corrupt(format!("value width {width}")));
    }
    let known = match version {
        1 => compression <= COMPRESSION_LZ4,
        _ => compression <= COMPRESSION_ZSTD,
    };
    if !known {
        return Err(corrupt(format!("compression {compression} is not known")));
    }
    let flags = b[38];
    let delta_flags = FLAG_DTZ_DELTA | FLAG_EQUALS_DTZ;
    let flags_sound = (version > 1 || flags == 0)
        && flags & !KNOWN_FLAGS == 0
        && (flags & delta_flags == 0 || metric == Metric::Dtz50)
        && (flags & FLAG_EQUALS_DTZ == 0 || flags & FLAG_DTZ_DELTA != 0);
    if !flags_sound {
        return Err(corrupt(format!("flags {flags:#04x}")));
    }
    if scheme != SCHEME_NALIMOV {
        return Err(corrupt(format!("index scheme {scheme}")));
    }
    let block_size = get_u32(b, 40);
    if block_size as usize != BLOCK_SIZE {
        return Err(corrupt(format!("block size {block_size}")));
    }
    let endgame = get_str(b, 16, 16);
    if Material::parse(&endgame).is_err() {
        return Err(corrupt(format!("endgame name '{endgame}'")));
    }
    let payload_len = get_u64(b, OFF_PAYLOAD_LEN);
    let expected = HEADER_LEN as u64 + payload_len;
    if len < expected {
        return Err(TableError::Truncated {
            path,
            expected,
            found: len,
        });
    }
    if len > expected {
        return Err(corrupt(format!(
            "{} bytes after the payload",
            len - expected
        )));
    }
    let mut sections = [None, None];
    let mut entries = [None, None];
    let mut next = HEADER_LEN as u64;
    let per_block = Packing::of(encoding, width as usize).per_block() as u64;
    for h in Half::BOTH {
        if halves & (1 << h as u8) == 0 {
            continue;
        }
        let slot = HALF_SLOT + 32 * h as usize;
        let s = Section {
            entries: get_u64(b, slot),
            offset: get_u64(b, slot + 8),
            len: get_u64(b, slot + 16),
            blocks: get_u64(b, slot + 24),
        };
        // Raw blocks fill their section exactly; compressed ones take 1 to `block_size` bytes.
        let full = s
            .blocks
            .checked_mul(block_size as u64 + 8)
            .and_then(|x| x.checked_add(8));
        let fits = if compression == COMPRESSION_NONE {
            full == Some(s.len)
        } else {
            full.is_some_and(|f| s.len <= f && s.len >= 8 + 9 * s.blocks)
        };
        let sound = s.offset == next
            && s.blocks == s.entries.div_ceil(per_block)
            && fits
            && s.offset.checked_add(s.len).is_some_and(|end| end <= len);
        if !sound {
            return Err(corrupt(format!(
                "section of half {} does not add up",
                h.name()
            )));
        }
        next = s.offset + s.len;
        entries[h as usize] = Some(s.entries);
        sections[h as usize] = Some(s);
    }
    let mut depth_spans = [None, None];
    let span_log2 = if version >= 3 { b[OFF_SPAN_LOG2] } else { 0 };
    if span_log2 != 0 {
        if span_log2 as u32 != SPAN_LOG2 || metric != Metric::Dtz50 {
            return Err(corrupt(format!("depths by span of 2^{span_log2} entries")));
        }
        for (h, region) in depth_spans.iter_mut().enumerate() {
            let (at, n) = (
                get_u64(b, OFF_SPANS + 16 * h),
                get_u64(b, OFF_SPANS + 16 * h + 8),
            );
            if n == 0 {
                continue;
            }
            if at != next || at.checked_add(n).is_none_or(|end| end > expected) {
                return Err(corrupt("depths by span do not add up".into()));
            }
            next = at + n;
            *region = Some((at, n));
        }
    }
    if next != expected {
        return Err(corrupt("sections do not fill the payload".into()));
    }
    let header = TableHeader {
        version,
        endgame,
        metric,
        encoding,
        value_width: width,
        compression,
        flags,
        scheme,
        block_size,
        entries,
        generator: get_str(b, OFF_GENERATOR, 32),
        created: get_u64(b, OFF_CREATED),
        payload_len,
        payload_hash: get_u64(b, OFF_PAYLOAD_HASH),
        max_depths: [0, 1].map(|h| {
            let at = OFF_MAX_DEPTHS + 2 * h;
            u16::from_le_bytes([b[at], b[at + 1]]).checked_sub(1)
        }),
        depth_spans,
    };
    Ok((header, sections))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_encoding_round_trip() {
        assert_eq!(TbValue::BROKEN.outcome(), Outcome::Broken);
        assert_eq!(TbValue::DRAW.outcome(), Outcome::Draw);
        for n in 1..=TbValue::MAX_WIN {
            assert_eq!(TbValue::win(n).unwrap().outcome(), Outcome::Win(n));
        }
        for n in 0..=TbValue::MAX_LOSS {
            assert_eq!(TbValue::loss(n).unwrap().outcome(), Outcome::Loss(n));
        }
        assert!(TbValue::win(0).is_none());
        assert!(TbValue::win(TbValue::MAX_WIN + 1).is_none());
        // 5-man DTM goes to 127: a win in 127 still fits one byte.
        assert!(TbValue::win(127).unwrap().raw() <= 255);
    }

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
