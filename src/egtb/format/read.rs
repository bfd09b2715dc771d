//! Reading table files: mapped, header and payload checksum checked on open, values read
//! block by block through the block cache.

use super::block::*;
use super::blockcache::{block_key, new_file_id, with_block};
use super::header::*;
use super::value::*;
use crate::egtb::index::Half;
use crate::egtb::material::Material;
use memmap2::Mmap;
use rayon::prelude::*;
use std::fs::File;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_64;

/// An open, verified table file.
pub struct TableFile {
    pub(super) path: PathBuf,
    /// Names this file's blocks in the block cache.
    pub(super) id: u64,
    pub(super) map: Mmap,
    /// The decompressed blocks of each half, when `load` has been called.
    pub(super) loaded: [Option<Vec<u8>>; 2],
    pub(super) header: TableHeader,
    pub(super) sections: [Option<Section>; 2],
    pub(super) packing: Packing,
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
