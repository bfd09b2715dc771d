//! The quiet-move counts of one half's entries, four bits an entry as `bitmaps`'s counters
//! hold them, kept on disk from the first solve of an endgame for the solves after it. DTM
//! counts every entry of the half of the side with less material before its first pass
//! (`BitmapSolver::precount`); DTZ and DTZ50 start their counters of that half's losses at the
//! same quiet counts (they count no captures), and read them here instead of making each
//! position and its moves again. KQRKBN's losing half wrote 3.7 GiB (its live king
//! placements; the rest of the file is left a hole), once, and read it once.

use crate::egtb::index::Half;
use memmap2::Mmap;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Where entry `i`'s four bits lie, two entries to a byte (the lower in the low bits): the
/// byte and the shift. The counters in memory (`bitmaps::Nibbles`) are laid out the same way.
#[inline(always)]
pub fn nibble(i: u64) -> (usize, u32) {
    ((i / 2) as usize, (i % 2) as u32 * 4)
}

/// The counts being written, chunk by chunk from several threads at once.
pub struct CountsWriter {
    path: PathBuf,
    file: File,
    half: Half,
}

impl CountsWriter {
    /// A new file at `path` (in the build's staging directory) for the `entries` counts of
    /// half `half`, all zero until written.
    pub fn create(path: &Path, half: Half, entries: u64) -> io::Result<CountsWriter> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        let writer = CountsWriter {
            path: path.to_path_buf(),
            file,
            half,
        };
        writer.file.set_len(entries.div_ceil(2))?;
        Ok(writer)
    }

    /// Writes the counts of the entries from `first` (even), laid out as `nibble` says.
    /// Chunks written at once must not share a byte.
    pub fn write(&self, first: u64, bytes: &[u8]) -> io::Result<()> {
        debug_assert!(first.is_multiple_of(2), "a chunk starts a byte");
        write_at(&self.file, bytes, first / 2)
    }

    /// The counts, for reading.
    pub fn finish(mut self) -> io::Result<MoveCounts> {
        // SAFETY: the file was created new by this build in its own staging directory and is
        // complete; nothing writes it again while it is mapped (it is removed when the
        // counts are dropped). An empty file is not mapped.
        let map = if self.file.metadata()?.len() == 0 {
            None
        } else {
            Some(unsafe { Mmap::map(&self.file)? })
        };
        Ok(MoveCounts {
            path: std::mem::take(&mut self.path),
            half: self.half,
            map,
        })
    }
}

impl Drop for CountsWriter {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes all of `bytes` at `offset` without moving a cursor that other threads share.
#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(windows)]
fn write_at(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(file, bytes, offset)? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => {
                bytes = &bytes[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Finished counts of one half.
pub struct MoveCounts {
    path: PathBuf,
    half: Half,
    map: Option<Mmap>,
}

impl MoveCounts {
    /// The half counted.
    pub fn half(&self) -> Half {
        self.half
    }

    /// The count of entry `i` (zero where none was written).
    #[inline]
    pub fn get(&self, i: u64) -> u8 {
        let (byte, shift) = nibble(i);
        self.map.as_deref().map_or(0, |m| m[byte] >> shift & 0xF)
    }
}

impl Drop for MoveCounts {
    fn drop(&mut self) {
        self.map = None;
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts written by chunks from several threads read back entry by entry, zero where
    /// no chunk was written, and the file is gone once they are dropped.
    #[test]
    fn counts_read_back_as_written() {
        use rayon::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counts");
        let entries = 10_001u64;
        let w = CountsWriter::create(&path, Half::Btm, entries).unwrap();
        let value = |i: u64| (i * 7 % 16) as u8;
        // Every chunk of 100 entries but the fifth.
        (0..entries.div_ceil(100))
            .into_par_iter()
            .filter(|&c| c != 4)
            .for_each(|c| {
                let range = c * 100..((c + 1) * 100).min(entries);
                let bytes: Vec<u8> = range
                    .clone()
                    .step_by(2)
                    .map(|i| {
                        value(i)
                            | if i + 1 < range.end {
                                value(i + 1) << 4
                            } else {
                                0
                            }
                    })
                    .collect();
                w.write(range.start, &bytes).unwrap();
            });
        let counts = w.finish().unwrap();
        assert_eq!(counts.half(), Half::Btm);
        for i in 0..entries {
            let want = if i / 100 == 4 { 0 } else { value(i) };
            assert_eq!(counts.get(i), want, "entry {i}");
        }
        drop(counts);
        assert!(!path.exists());
    }
}
