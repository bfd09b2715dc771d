//! A solved unit on disk: its final working codes of the three metrics, per half and per run of
//! entries with one pair of kings (`Layout::of_unit` numbers the kings first), each run
//! compressed on its own (zstd, checksummed) so that the files' writer reads one run of every
//! unit for each king block of Nalimov's index. The values of its e.p. positions that
//! Nalimov's e.p. zone keeps follow, by their index there. A file is written under a
//! temporary name and renamed when whole: one that is present is a unit done, the unit a
//! stopped build does not solve again. Its key (the endgame, the unit's number and variants)
//! tells a file of another plan from one of this.

use super::Variant;
use crate::egtb::index::Half;
use crate::egtb::material::Material;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"FTUNIT01";

/// Runs of a half: White's king on files a-d, Black's king anywhere.
pub const RUNS: usize = 32 * 64;

/// Slices of a file: a run per metric and half.
const SLICES: usize = 3 * 2 * RUNS;

/// Header: magic, key, entries a run, largest raw file value per metric, DTZ50 = DTZ flag,
/// e.p. entries; then the slices' offsets (one more than slices).
const HEADER: usize = 8 + 8 + 8 + 3 * 2 + 1 + 8;

/// One e.p. position's entry in Nalimov's e.p. zone and its three codes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpEntry {
    pub half: Half,
    pub index: u64,
    pub codes: [u16; 3],
}

/// What identifies unit `n` of endgame `m` with these variants.
pub fn key(m: &Material, n: usize, variants: &[Variant]) -> u64 {
    let mut bytes = m.to_string().into_bytes();
    bytes.extend((n as u64).to_le_bytes());
    for v in variants {
        bytes.extend(v.pawns[0].to_le_bytes());
        bytes.extend(v.pawns[1].to_le_bytes());
        bytes.push(v.ep);
    }
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// Where unit `n` of a build is kept.
pub fn path(work: &Path, n: usize) -> PathBuf {
    work.join(format!("{n:06}.unit"))
}

/// What a unit's file holds besides its codes.
#[derive(Clone, Copy, Debug)]
pub struct UnitFacts {
    /// Per metric, the largest raw file value of its entries.
    pub max_raw: [u16; 3],
    /// Its DTZ50 equals its DTZ.
    pub dtz50_same: bool,
}

/// A unit's file being written, one metric at a time in `METRICS` order, each run compressed
/// and written as it comes: a solve holds no more than the metric it has just finished. The
/// header and the offsets, known only at the end, have their room kept at the start.
pub struct UnitWriter {
    tmp: PathBuf,
    file: io::BufWriter<File>,
    run_len: u64,
    z: zstd::bulk::Compressor<'static>,
    bytes: Vec<u8>,
    /// The slices' offsets so far.
    offsets: Vec<u64>,
    at: u64,
}

impl UnitWriter {
    /// Starts the file of the unit to be kept at `path`, `run_len` entries a run.
    pub fn create(path: &Path, run_len: u64) -> io::Result<UnitWriter> {
        let tmp = path.with_extension("part");
        let mut file = io::BufWriter::new(File::create(&tmp)?);
        let at = (HEADER + 8 * (SLICES + 1)) as u64;
        file.seek(SeekFrom::Start(at))?;
        let mut z = zstd::bulk::Compressor::new(1)?;
        z.include_checksum(true)?;
        Ok(UnitWriter {
            tmp,
            file,
            run_len,
            z,
            bytes: Vec::new(),
            offsets: Vec::with_capacity(SLICES + 1),
            at,
        })
    }

    /// Adds the next metric's codes, `codes[half]` in layout order.
    pub fn add(&mut self, codes: &[Vec<u16>; 2]) -> io::Result<()> {
        let len = self.run_len as usize;
        for half in codes {
            for k in 0..RUNS {
                self.bytes.clear();
                let run = &half[k * len..(k + 1) * len];
                self.bytes.extend(run.iter().flat_map(|c| c.to_le_bytes()));
                let frame = self.z.compress(&self.bytes)?;
                self.file.write_all(&frame)?;
                self.offsets.push(self.at);
                self.at += frame.len() as u64;
            }
        }
        Ok(())
    }

    /// Writes what follows the three metrics and puts the file in its place: a unit done.
    pub fn finish(
        mut self,
        path: &Path,
        key: u64,
        facts: UnitFacts,
        ep: &[EpEntry],
    ) -> io::Result<()> {
        assert_eq!(self.offsets.len(), SLICES, "three metrics added");
        self.offsets.push(self.at);
        for e in ep {
            self.file.write_all(&[e.half as u8])?;
            self.file.write_all(&e.index.to_le_bytes())?;
            for c in e.codes {
                self.file.write_all(&c.to_le_bytes())?;
            }
        }
        let mut head = Vec::with_capacity(HEADER + 8 * (SLICES + 1));
        head.extend(MAGIC);
        head.extend(key.to_le_bytes());
        head.extend(self.run_len.to_le_bytes());
        for m in facts.max_raw {
            head.extend(m.to_le_bytes());
        }
        head.push(facts.dtz50_same as u8);
        head.extend((ep.len() as u64).to_le_bytes());
        for o in &self.offsets {
            head.extend(o.to_le_bytes());
        }
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(&head)?;
        let f = self.file.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&self.tmp, path)
    }
}

/// A unit's file opened for reading.
pub struct UnitReader {
    file: File,
    offsets: Vec<u64>,
    run_len: u64,
    pub facts: UnitFacts,
    ep_count: u64,
}

fn damaged(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {what}", path.display()),
    )
}

impl UnitReader {
    /// The unit at `path` if it is there and of this plan (`key`); an error if it is damaged.
    pub fn open(path: &Path, key: u64) -> io::Result<Option<UnitReader>> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut head = [0u8; HEADER];
        if file.read_exact(&mut head).is_err() || &head[..8] != MAGIC {
            return Err(damaged(path, "not a unit file"));
        }
        let u64_at = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().expect("8 bytes"));
        if u64_at(8) != key {
            return Ok(None);
        }
        let run_len = u64_at(16);
        let max_raw = [0, 1, 2].map(|m| u16::from_le_bytes([head[24 + 2 * m], head[25 + 2 * m]]));
        let dtz50_same = head[30] != 0;
        let ep_count = u64_at(31);
        let mut raw = vec![0u8; 8 * (SLICES + 1)];
        file.read_exact(&mut raw)
            .map_err(|_| damaged(path, "offsets cut short"))?;
        let offsets: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let len = file.metadata()?.len();
        if offsets.windows(2).any(|w| w[0] > w[1]) || offsets[SLICES] + ep_count * 15 != len {
            return Err(damaged(path, "length does not match its offsets"));
        }
        Ok(Some(UnitReader {
            file,
            offsets,
            run_len,
            facts: UnitFacts {
                max_raw,
                dtz50_same,
            },
            ep_count,
        }))
    }

    /// The codes of run `k` of `half` for metric number `metric` (of `METRICS`) into `out`.
    pub fn run(&self, metric: usize, half: Half, k: usize, out: &mut Vec<u16>) -> io::Result<()> {
        let s = (metric * 2 + half as usize) * RUNS + k;
        let (a, b) = (self.offsets[s], self.offsets[s + 1]);
        let want = 2 * self.run_len as usize;
        RUN_SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let RunScratch { z, packed, bytes } = &mut *scratch;
            packed.resize((b - a) as usize, 0);
            self.file.read_exact_at(packed, a)?;
            if z.is_none() {
                *z = Some(zstd::bulk::Decompressor::new()?);
            }
            bytes.resize(want, 0);
            let n = z
                .as_mut()
                .expect("made above")
                .decompress_to_buffer(packed, bytes)?;
            if n != want {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a run cut short",
                ));
            }
            out.clear();
            out.extend(
                bytes
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]])),
            );
            Ok(())
        })
    }

    /// The unit's e.p. entries of Nalimov's e.p. zone.
    pub fn ep(&self) -> io::Result<Vec<EpEntry>> {
        let mut raw = vec![0u8; self.ep_count as usize * 15];
        self.file.read_exact_at(&mut raw, self.offsets[SLICES])?;
        Ok(raw
            .chunks_exact(15)
            .map(|c| EpEntry {
                half: if c[0] == 0 { Half::Wtm } else { Half::Btm },
                index: u64::from_le_bytes(c[1..9].try_into().expect("8 bytes")),
                codes: [0, 1, 2].map(|m| u16::from_le_bytes([c[9 + 2 * m], c[10 + 2 * m]])),
            })
            .collect())
    }
}

/// What reading a run takes, kept by each thread: a decompression context and the buffers
/// (a context made for every run read was 2% of writing KRPKR).
#[derive(Default)]
struct RunScratch {
    z: Option<zstd::bulk::Decompressor<'static>>,
    packed: Vec<u8>,
    bytes: Vec<u8>,
}

thread_local! {
    static RUN_SCRATCH: std::cell::RefCell<RunScratch> = std::cell::RefCell::default();
}
