//! Writing table files: a whole table at once (`write_table`) or block by block as the
//! generator's assembly hands them over (`TableWriter`), always to a temporary name that is
//! synced and renamed, so that a crash never leaves a file that looks complete.

use super::block::*;
use super::header::*;
use super::read::TableFile;
use super::value::*;
use crate::egtb::index::Half;
use crate::egtb::material::Material;
use rayon::prelude::*;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

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

    /// Records the depths by span of a half of the index (`generate::finish::add_span_depths`), of both
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
        // SOURCE_DATE_EPOCH (reproducible-builds.org) stands for the clock where it is set, so
        // that two builds of a table can be compared byte for byte.
        let created = std::env::var("SOURCE_DATE_EPOCH")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
            });
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
/// by one ply (`egtb::play::tables::one_ply`). The section's bytes are copied as they stand (its block table
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
/// file is written from them (`generate::finish::write_wdl`) and `finish_zeroing` depth-codes
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
