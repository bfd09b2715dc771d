//! The quiet-move counts of one half's entries, four bits an entry as `bitmaps`'s counters
//! hold them and a carry bit an entry (counts from 15 to 28: the nibble holds the count less
//! 14, as a carrying counter does), kept on disk from the first solve of an endgame for the
//! solves after it. DTM counts every entry of the half of the side with less material before
//! its first pass (`BitmapSolver::precount`); DTZ and DTZ50 start their counters of that
//! half's losses at the same quiet counts (they count no captures), and read them here
//! instead of making each position and its moves again. KQRKBN's losing half wrote 3.7 GiB
//! of counts and an eighth of that in carry bits (its live king placements; the rest of the
//! file is left a hole), once, and read it once.

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
    entries: u64,
    /// Carry words that chunks hold in part (`write_carries`).
    shared: std::sync::Mutex<Vec<(u64, u64)>>,
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
            entries,
            shared: std::sync::Mutex::new(Vec::new()),
        };
        writer
            .file
            .set_len(carry_offset(entries) + 8 * entries.div_ceil(64))?;
        Ok(writer)
    }

    /// Writes the counts of the entries from `first` (even), laid out as `nibble` says.
    /// Chunks written at once must not share a byte.
    pub fn write(&self, first: u64, bytes: &[u8]) -> io::Result<()> {
        debug_assert!(first.is_multiple_of(2), "a chunk starts a byte");
        write_at(&self.file, bytes, first / 2)
    }

    /// Writes the carry bits of the entries `range` (those of a chunk of counts), `words[k]`
    /// those of entries `64 (range.start / 64 + k) ..`, bit j for entry `64 (..) + j`. A word
    /// the range holds only in part may be shared with another chunk: its bits are merged and
    /// written by `finish`.
    pub fn write_carries(&self, range: std::ops::Range<u64>, words: &[u64]) -> io::Result<()> {
        let first = range.start / 64;
        let (whole_start, whole_end) = (range.start.div_ceil(64), range.end / 64);
        let mut bytes = [0u8; 8 * 64];
        for start in (whole_start..whole_end).step_by(64) {
            let end = (start + 64).min(whole_end);
            let from = (start - first) as usize;
            for (out, w) in bytes
                .chunks_exact_mut(8)
                .zip(&words[from..][..(end - start) as usize])
            {
                out.copy_from_slice(&w.to_le_bytes());
            }
            let at = carry_offset(self.entries) + 8 * start;
            write_at(&self.file, &bytes[..8 * (end - start) as usize], at)?;
        }
        let partial =
            (first..range.end.div_ceil(64)).filter(|&w| w < whole_start || w >= whole_end);
        let mut shared = self.shared.lock().expect("no panic holding it");
        shared.extend(partial.map(|w| (w, words[(w - first) as usize])));
        Ok(())
    }

    /// The counts, for reading.
    pub fn finish(mut self) -> io::Result<MoveCounts> {
        let mut shared = std::mem::take(self.shared.get_mut().expect("no panic holding it"));
        shared.sort_unstable();
        for group in shared.chunk_by(|a, b| a.0 == b.0) {
            let bits = group.iter().fold(0, |m, &(_, b)| m | b);
            let at = carry_offset(self.entries) + 8 * group[0].0;
            write_at(&self.file, &bits.to_le_bytes(), at)?;
        }
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
            carries: carry_offset(self.entries) as usize,
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

/// Where the carry bits of a file of `entries` counts start: after the counts, at a whole
/// word.
fn carry_offset(entries: u64) -> u64 {
    entries.div_ceil(2).div_ceil(8) * 8
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
    /// Where the carry bits start in the file.
    carries: usize,
    map: Option<Mmap>,
}

impl MoveCounts {
    /// The half counted.
    pub fn half(&self) -> Half {
        self.half
    }

    /// The counts of entries `64 w + 16 part ..` (up to 16), entry `64 w + 16 part + k` in
    /// bits `4 k ..`: the layout of a word of counters (`bitmaps::Nibbles`).
    #[inline]
    pub fn word(&self, w: u64, part: u64) -> u64 {
        self.u64_at(32 * w as usize + 8 * part as usize, self.carries)
    }

    /// The carry bits of entries `64 w ..`: set where the count is 14 more than its nibble.
    #[inline]
    pub fn carried_word(&self, w: u64) -> u64 {
        let len = self.map.as_deref().map_or(0, <[u8]>::len);
        self.u64_at(self.carries + 8 * w as usize, len)
    }

    /// Eight bytes of the file from `at` (little-endian), zero at and past `end`.
    #[inline]
    fn u64_at(&self, at: usize, end: usize) -> u64 {
        let Some(m) = self.map.as_deref() else {
            return 0;
        };
        let mut bytes = [0u8; 8];
        if at < end {
            let stop = (at + 8).min(end);
            bytes[..stop - at].copy_from_slice(&m[at..stop]);
        }
        u64::from_le_bytes(bytes)
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
        // Carry bits by chunks of 100 entries too: most words are shared by two chunks.
        let carried = |i: u64| i.is_multiple_of(3) && i / 100 != 7;
        (0..entries.div_ceil(100)).into_par_iter().for_each(|c| {
            let range = c * 100..((c + 1) * 100).min(entries);
            let words: Vec<u64> = (range.start / 64..range.end.div_ceil(64))
                .map(|k| {
                    (0..64)
                        .map(|j| 64 * k + j)
                        .filter(|&i| range.contains(&i) && carried(i))
                        .fold(0, |m, i| m | 1 << (i % 64))
                })
                .collect();
            w.write_carries(range, &words).unwrap();
        });
        let counts = w.finish().unwrap();
        assert_eq!(counts.half(), Half::Btm);
        for i in 0..entries {
            assert_eq!(
                counts.carried_word(i / 64) >> (i % 64) & 1 != 0,
                carried(i),
                "entry {i}"
            );
        }
        assert_eq!(counts.carried_word(entries.div_ceil(64)), 0);
        for i in 0..entries {
            let want = if i / 100 == 4 { 0 } else { value(i) };
            let (w, part, k) = (i / 64, i % 64 / 16, i % 16);
            assert_eq!(
                counts.word(w, part) >> (4 * k) & 0xF,
                want as u64,
                "entry {i}"
            );
        }
        drop(counts);
        assert!(!path.exists());
    }
}
