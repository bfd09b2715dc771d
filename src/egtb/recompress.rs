//! `engine gentb --recompress`: rewrites an endgame's three files in the current format (zstd
//! blocks, broken entries unmarked, DTZ50 as differences from DTZ) and adds its WDL file,
//! without generating anything. The new files are written into a staging directory, every
//! legal entry of every metric is read back and compared with the old files, and only then are
//! they moved over the old ones (`egtb::staging`): a kill at any point leaves the old files or
//! the new ones, each endgame readable throughout. Files already current only gain the WDL
//! file, written in a staging directory and moved beside them once checked.

use super::file::{
    file_name, write_compact, Metric, TableError, TableFile, TbValue, Wdl5, COMPRESSION_ZSTD,
    FORMAT_VERSION,
};
use super::index::{EndgameIndex, Half};
use super::material::Material;
use super::staging::Staging;
use super::tables::EndgameTables;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RecompressError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("{}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
    /// The new files do not give the old values: nothing was replaced.
    #[error("{endgame}: {mismatches} entries read back differently; the old files are kept")]
    Mismatch { endgame: Material, mismatches: u64 },
}

/// What converting one endgame did.
pub struct Converted {
    pub material: Material,
    /// Bytes of the three files before and after.
    pub bytes: [u64; 2],
    /// Legal entries compared, each in all three metrics.
    pub checked: u64,
}

/// Are the three distance files of `t` in the current format already?
fn current(t: &EndgameTables) -> bool {
    Metric::ALL.iter().all(|&metric| {
        let h = t.header(metric);
        h.version == FORMAT_VERSION
            && h.compression == COMPRESSION_ZSTD
            && !h.marks_broken()
            && (metric != Metric::Dtz50 || h.is_dtz_delta())
    })
}

fn bytes_of(dir: &Path, m: &Material) -> u64 {
    Metric::ALL
        .iter()
        .chain([Metric::Wdl].iter())
        .filter_map(|&x| std::fs::metadata(dir.join(file_name(m, x))).ok())
        .map(|md| md.len())
        .sum()
}

/// Converts the tables of `material` in `dir` (all three files must be present and valid);
/// None if they are in the current format already and have their WDL file.
pub fn recompress(dir: &Path, material: &Material) -> Result<Option<Converted>, RecompressError> {
    let m = material.canonical().0;
    let old = EndgameTables::open(dir, &m)?;
    let has_wdl = old.file(Metric::Wdl).is_some();
    if current(&old) && has_wdl {
        return Ok(None);
    }
    let before = bytes_of(dir, &m);
    if current(&old) {
        return add_wdl(dir, old, before).map(Some);
    }
    let staging = Staging::new(dir).map_err(|e| RecompressError::Io(dir.to_path_buf(), e))?;
    let index = old.index();
    for metric in Metric::ALL {
        let values: Vec<(Half, Vec<TbValue>)> = index
            .stored_halves()
            .iter()
            .map(|&h| {
                let v = (0..index.size(h))
                    .into_par_iter()
                    .map(|i| old.value(metric, h, i).expect("entry within the file"))
                    .collect();
                (h, v)
            })
            .collect();
        let halves: Vec<(Half, &[TbValue])> = values.iter().map(|(h, v)| (*h, &v[..])).collect();
        write_compact(staging.dir(), &m, metric, &halves)?;
    }
    EndgameTables::open(staging.dir(), &m)?.write_wdl(staging.dir())?;
    let new = EndgameTables::open(staging.dir(), &m)?;
    let read = |t: &EndgameTables, h, i| (t.values(h, i), t.result(h, i));
    let (checked, mismatches) =
        count_differences(old.index(), |h, i| read(&old, h, i) != read(&new, h, i));
    if mismatches > 0 {
        return Err(RecompressError::Mismatch {
            endgame: m,
            mismatches,
        });
    }
    drop((old, new));
    staging
        .publish(dir, &m)
        .map_err(|(p, e)| RecompressError::Io(p, e))?;
    Ok(Some(Converted {
        material: m,
        bytes: [before, bytes_of(dir, &m)],
        checked,
    }))
}

/// Legal entries of `index` and how many of them `differs`.
fn count_differences(
    index: &EndgameIndex,
    differs: impl Fn(Half, u64) -> bool + Sync,
) -> (u64, u64) {
    index
        .stored_halves()
        .iter()
        .map(|&h| {
            (0..index.size(h))
                .into_par_iter()
                .filter(|&i| index.decode(h, i).is_some())
                .map(|i| (1, differs(h, i) as u64))
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Adds the WDL file to current tables: written in a staging directory, each legal entry's
/// result compared with DTM's and DTZ50's, then moved beside them.
fn add_wdl(dir: &Path, old: EndgameTables, before: u64) -> Result<Converted, RecompressError> {
    let m = old.material();
    let staging = Staging::new(dir).map_err(|e| RecompressError::Io(dir.to_path_buf(), e))?;
    let written = old.write_wdl(staging.dir())?;
    let wdl = TableFile::open_for(&written, &m, Metric::Wdl)?;
    let (checked, mismatches) = count_differences(old.index(), |h, i| {
        wdl.value(h, i).and_then(|v| Wdl5::from_code(v.raw())) != old.result(h, i)
    });
    if mismatches > 0 {
        return Err(RecompressError::Mismatch {
            endgame: m,
            mismatches,
        });
    }
    drop((old, wdl));
    let to = dir.join(file_name(&m, Metric::Wdl));
    std::fs::rename(&written, &to)
        .and_then(|_| std::fs::File::open(dir)?.sync_all())
        .map_err(|e| RecompressError::Io(to, e))?;
    Ok(Converted {
        material: m,
        bytes: [before, bytes_of(dir, &m)],
        checked,
    })
}

/// The endgames whose three files are present in `dir` (by name; validity is checked when
/// they are opened).
pub fn endgames_in(dir: &Path) -> std::io::Result<Vec<Material>> {
    let mut out: Vec<Material> = std::fs::read_dir(dir)?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let stem = name.to_str()?.strip_suffix(".dtm.ftb")?;
            let m = Material::parse(stem).ok()?.canonical().0;
            let all = Metric::ALL
                .iter()
                .all(|&x| dir.join(file_name(&m, x)).is_file());
            all.then_some(m)
        })
        .collect();
    out.sort_by_key(|m| (m.men(), m.to_string()));
    out.dedup();
    Ok(out)
}
