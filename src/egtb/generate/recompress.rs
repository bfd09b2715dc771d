//! `engine gentb --recompress`: rewrites an endgame's three files in the current format (zstd
//! blocks, broken entries unmarked, depths alone with the results in the WDL file, whose values
//! lie three to a byte, DTZ50 as differences from DTZ with its depths by span, up to five men
//! DTZ and DTZ50 for one side to move, and in five-man endgames DTM too) and adds its WDL file,
//! without generating anything. The endgame is put together in a staging directory, every legal
//! entry of every metric and its result is read back and compared with the old files, and only
//! then are the files moved over the old ones (`egtb::format::staging`): a kill at any point leaves the
//! old files or the new ones, each endgame readable throughout.

use super::finish::{finish_zeroing, keep_one_side, write_wdl, ONE_SIDE_MAX_MEN};
use crate::chess::Position;
use crate::egtb::format::staging::Staging;
use crate::egtb::format::{
    file_name, write_compact, Metric, TableError, TbValue, COMPRESSION_ZSTD, ENCODING_WDL5_PACKED,
    FORMAT_VERSION,
};
use crate::egtb::index::{EndgameIndex, Half};
use crate::egtb::material::Material;
use crate::egtb::play::tables::{EndgameTables, DTM_ONE_SIDE_MEN};
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

/// Are the three distance files of `t` zstd blocks of format 2 or later (`current`: of this
/// format), broken entries unmarked, DTZ50 as differences, and (`depths`) depth-coded?
fn compact(t: &EndgameTables, depths: bool, current: bool) -> bool {
    Metric::ALL.iter().all(|&metric| {
        let h = t.header(metric);
        (h.version == FORMAT_VERSION || !current && h.version >= 2)
            && h.compression == COMPRESSION_ZSTD
            && !h.marks_broken()
            && (h.is_depth_coded() || !depths)
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
/// None if there is nothing to do: the files are current (six-man tables: format 2 or 3), with
/// their WDL file, and DTZ and DTZ50 (and DTM, `DTM_ONE_SIDE_MEN`) store one side to move
/// wherever they may (`ONE_SIDE_MAX_MEN`, and the sub-endgames present in `dir`, which the
/// check of the side left out reads).
pub fn recompress(dir: &Path, material: &Material) -> Result<Option<Converted>, RecompressError> {
    let m = material.canonical().0;
    let old = EndgameTables::open(dir, &m)?;
    let subs = sub_endgames(dir, &m);
    // Tables of one side need their sub-endgames to be read whole, and to be kept so.
    let old_one_side = old.zeroing_missing().is_some();
    let old_done = old_one_side && (old.dtm_missing().is_some() || m.men() != DTM_ONE_SIDE_MEN);
    let one_side =
        m.men() <= ONE_SIDE_MAX_MEN && old.index().stored_halves().len() == 2 && subs.is_some();
    // Six-man tables of format 2 or later are kept as they are, given their WDL file: their
    // values are not held in memory for a conversion (nor DTZ50's depths by span added).
    let six_kept = m.men() > ONE_SIDE_MAX_MEN && compact(&old, false, false);
    let has_wdl = old.file(Metric::Wdl).is_some();
    let wdl_packed = old
        .file(Metric::Wdl)
        .is_some_and(|f| f.header().encoding == ENCODING_WDL5_PACKED);
    let is_current = compact(&old, true, true) && wdl_packed;
    if (is_current && (old_done || !one_side)) || (six_kept && has_wdl) {
        return Ok(None);
    }
    let Some(subs) = subs.or_else(|| (!old_one_side).then(Vec::new)) else {
        return Err(RecompressError::Table(TableError::BadInput(format!(
            "{m}: stored for one side to move; its sub-endgames must be in the directory"
        ))));
    };
    let before = bytes_of(dir, &m);
    let staging = Staging::new(dir).map_err(|e| RecompressError::Io(dir.to_path_buf(), e))?;
    let out = staging.dir();
    if is_current || six_kept {
        // The files stay as they are (depth-coded files have their WDL file): linked into the
        // staging directory (copied where the file system has no links), so that the endgame
        // is put together and checked there; then one side is kept, or the WDL file added.
        let present = Metric::ALL.iter().chain(has_wdl.then_some(&Metric::Wdl));
        for &metric in present {
            let name = file_name(&m, metric);
            let (from, to) = (dir.join(&name), out.join(&name));
            std::fs::hard_link(&from, &to)
                .or_else(|_| std::fs::copy(&from, &to).map(drop))
                .map_err(|e| RecompressError::Io(to, e))?;
        }
        if six_kept {
            write_wdl(out, &m)?;
        } else {
            keep_one_side(&EndgameTables::open(out, &m)?, out)?;
        }
    } else {
        // Every entry's three values (a side left out by one ply; broken entries of that side
        // as broken), a half at a time.
        let index = old.index();
        let values: Vec<(Half, Vec<[TbValue; 3]>)> = index
            .stored_halves()
            .iter()
            .map(|&h| {
                let v = (0..index.size(h))
                    .into_par_iter()
                    .map_init(Position::startpos, |pos, i| {
                        old.values_by_one_ply(h, i, &subs[..], pos)
                            .unwrap_or([TbValue::BROKEN; 3])
                    })
                    .collect();
                (h, v)
            })
            .collect();
        for (k, metric) in Metric::ALL.into_iter().enumerate() {
            let column: Vec<(Half, Vec<TbValue>)> = values
                .iter()
                .map(|(h, v)| (*h, v.iter().map(|x| x[k]).collect()))
                .collect();
            let halves: Vec<(Half, &[TbValue])> =
                column.iter().map(|(h, v)| (*h, &v[..])).collect();
            write_compact(out, &m, metric, &halves)?;
        }
        drop(values);
        // The result of every entry from the values just written, then depths alone.
        let scan = write_wdl(out, &m)?;
        finish_zeroing(out, &m, one_side, &scan)?;
    }
    // Every legal entry's result and three values (a side left out by one ply) read back.
    let new = EndgameTables::open(out, &m)?;
    let (checked, mismatches) = count_differences(old.index(), |pos, h, i| {
        old.result(h, i) != new.result(h, i)
            || !six_kept
                && old.values_by_one_ply(h, i, &subs[..], pos)
                    != new.values_by_one_ply(h, i, &subs[..], pos)
    });
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

/// The tables of the sub-endgames of `m` in `dir`, None unless all are there.
fn sub_endgames(dir: &Path, m: &Material) -> Option<Vec<EndgameTables>> {
    crate::egtb::play::tables::open_subs(std::iter::once(dir), m, None).ok()
}

/// Legal entries of `index` and how many of them `differs` (given a scratch position).
fn count_differences(
    index: &EndgameIndex,
    differs: impl Fn(&mut Position, Half, u64) -> bool + Sync,
) -> (u64, u64) {
    index
        .stored_halves()
        .iter()
        .map(|&h| {
            (0..index.size(h))
                .into_par_iter()
                .filter(|&i| index.decode(h, i).is_some())
                .map_init(Position::startpos, |pos, i| (1, differs(pos, h, i) as u64))
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
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
