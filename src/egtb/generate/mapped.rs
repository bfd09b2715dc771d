//! A metric's final values in Nalimov order, held in a file of the staging directory and mapped
//! rather than in anonymous memory: six-man halves take up to 12 GB each, which the kernel
//! keeps in its page cache while it can and writes out when it must. The file's blocks are
//! reserved when it is made, so a full disk is an error there and never a fault on a write
//! through the map.

use crate::egtb::file::TbValue;
use crate::egtb::index::Half;
use memmap2::MmapMut;
use rayon::prelude::*;
use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU16;
use std::sync::atomic::Ordering::Relaxed;

pub struct MappedValues {
    path: PathBuf,
    map: Option<MmapMut>,
    /// Per half: first entry in the file and number of entries (0: not stored).
    halves: [(usize, usize); 2],
}

impl MappedValues {
    /// A new file at `path` with `sizes[h]` entries for each half, all broken.
    pub fn create(path: &Path, sizes: [u64; 2]) -> io::Result<MappedValues> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        let mut out = MappedValues {
            path: path.to_path_buf(),
            map: None,
            halves: [
                (0, sizes[0] as usize),
                (sizes[0] as usize, sizes[1] as usize),
            ],
        };
        let bytes = (sizes[0] + sizes[1]) * 2;
        if bytes == 0 {
            return Ok(out);
        }
        // Zeros are `TbValue::BROKEN`.
        fs4::FileExt::allocate(&file, bytes)?;
        file.set_len(bytes)?;
        // SAFETY: the file was created new in this build's own staging directory, and nothing
        // else opens it while it is mapped (it is removed when this is dropped). Its blocks are
        // allocated, so writes through the map cannot fault for want of disk.
        out.map = Some(unsafe { MmapMut::map_mut(&file)? });
        Ok(out)
    }

    /// The entries of half `h`, for writing from several threads.
    pub fn cells(&self, h: Half) -> &[AtomicU16] {
        let (first, len) = self.halves[h as usize];
        let Some(map) = &self.map else {
            return &[];
        };
        let bytes = &map[first * 2..(first + len) * 2];
        // SAFETY: the map is page-aligned, so `bytes` is 2-aligned; `AtomicU16` has the size
        // and alignment of `u16` and allows shared mutation. The bytes are only reached through
        // views of `&self` (this one) or of `&mut self` (`values`), so no plain reference to
        // them lives while atomic writes happen.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<AtomicU16>(), len) }
    }

    /// Replaces every value `v` of both halves by `f(v)`.
    pub fn update(&self, f: impl Fn(TbValue) -> TbValue + Sync) {
        for h in Half::BOTH {
            self.cells(h).par_iter().for_each(|c| {
                let v = TbValue::from_raw(c.load(Relaxed));
                c.store(f(v).raw(), Relaxed);
            });
        }
    }

    /// The values of both halves (empty for a half not stored), once writing is over.
    pub fn values(&mut self) -> [&[TbValue]; 2] {
        let halves = self.halves;
        let Some(map) = self.map.as_mut() else {
            return [&[], &[]];
        };
        let all: &[u8] = map;
        halves.map(|(first, len)| {
            let bytes = &all[first * 2..(first + len) * 2];
            // SAFETY: as in `cells`, 2-aligned; `TbValue` is `repr(transparent)` over `u16`,
            // every bit pattern is a value, and `&mut self` excludes atomic views meanwhile.
            unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<TbValue>(), len) }
        })
    }
}

impl Drop for MappedValues {
    fn drop(&mut self) {
        self.map = None;
        let _ = std::fs::remove_file(&self.path);
    }
}
