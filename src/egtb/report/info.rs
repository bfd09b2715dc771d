//! What `engine tbinfo` reports of an endgame: what the index scheme says (sizes and broken
//! entries of both halves, Nalimov et al. 2001 Tables 9-14) and, when its table files are
//! present (and its WDL file), their headers and whether their checksums hold; on request, the win/draw/loss counts
//! and deepest values the files hold (Table 8), which takes a scan of every entry.

use crate::egtb::format::{
    file_name, Metric, Outcome, TableError, TableFile, TableHeader, TbValue,
};
use crate::egtb::index::{EndgameIndex, Half};
use crate::egtb::material::{Material, MaterialError};
use crate::egtb::play::tables::{EndgameTables, DTM_ONE_SIDE_MEN};
use rayon::prelude::*;
use std::path::Path;

/// Per-half counts from a table file, for the side to move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HalfStats {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub broken: u64,
    /// Wins and losses that hold under the 50-move rule (from the DTZ50 file; the rest of
    /// `wins` and `losses` are draws under the rule).
    /// None without a DTZ50 file.
    pub wins50: Option<u64>,
    pub losses50: Option<u64>,
    /// Deepest win and loss per metric (index `Metric as usize - 1`), in the files' units: DTM
    /// in the winner's moves, DTZ and DTZ50 in plies. None if the metric's file is absent or the
    /// half has no such outcome.
    pub max_win: [Option<u16>; 3],
    pub max_loss: [Option<u16>; 3],
}

/// One metric's file: missing, unreadable (with the reason), or open.
pub enum FileStatus {
    Missing,
    Bad(TableError),
    Ok(Box<TableHeader>),
}

pub struct Report {
    pub material: Material,
    pub sizes: [u64; 2],
    /// None where no count is stored for the endgame (six men) and none was asked for.
    pub broken: Option<[u64; 2]>,
    pub files: Vec<(Metric, String, FileStatus)>,
    /// Present when at least one file could be read.
    pub stats: Option<[HalfStats; 2]>,
}

impl Report {
    /// False if some file exists but was refused.
    pub fn files_ok(&self) -> bool {
        !self.files.iter().any(|f| matches!(f.2, FileStatus::Bad(_)))
    }
}

/// Builds the report for `endgame` (any colouring; reported canonically) with files in `dir`;
/// with `scan`, also the statistics of the files (and the broken entries counted where no
/// count is stored).
pub fn tbinfo(endgame: &str, dir: &Path, scan: bool) -> Result<Report, MaterialError> {
    let material = Material::parse(endgame)?.canonical().0;
    let index = EndgameIndex::new(&material);
    let sizes = [index.size(Half::Wtm), index.size(Half::Btm)];
    let broken = crate::egtb::index::broken::stored(&material)
        .or_else(|| scan.then(|| Half::BOTH.map(|h| index.count_broken(h))));
    let mut files = Vec::new();
    let mut stats: Option<[HalfStats; 2]> = None;
    // A DTZ50 file of differences from DTZ is read through the DTZ file.
    let mut dtz: Option<TableFile> = None;
    let mut tables: Option<Result<EndgameTables, TableError>> = None;
    for metric in Metric::ALL {
        let name = file_name(&material, metric);
        let path = dir.join(&name);
        if !path.exists() {
            files.push((metric, name, FileStatus::Missing));
            continue;
        }
        let table = match TableFile::open_for(&path, &material, metric) {
            Ok(t) => t,
            Err(e) => {
                files.push((metric, name, FileStatus::Bad(e)));
                continue;
            }
        };
        // The file must cover exactly the halves and ranges of the index, but DTZ and DTZ50
        // (and DTM of five men) may leave one side to move out (answered by one ply: `one_ply`).
        let stored = index.stored_halves();
        let one_side = (matches!(metric, Metric::Dtz | Metric::Dtz50)
            || metric == Metric::Dtm && material.men() == DTM_ONE_SIDE_MEN)
            && stored.len() == 2
            && stored
                .iter()
                .filter(|&&h| table.entries(h).is_some())
                .count()
                == 1;
        let present = |h: Half| !(one_side && table.entries(h).is_none());
        let mismatch = stored.iter().filter(|&&h| present(h)).find_map(|&h| {
            (table.entries(h) != Some(index.size(h))).then(|| {
                format!(
                    "half {} has {:?} entries, the index {}",
                    h.name(),
                    table.entries(h),
                    index.size(h)
                )
            })
        });
        if let Some(what) = mismatch {
            let e = TableError::Corrupt { path, what };
            files.push((metric, name, FileStatus::Bad(e)));
            continue;
        }
        if scan {
            let s = stats.get_or_insert_with(Default::default);
            let m = metric as usize - 1;
            let count_outcomes = m == 0
                || s.iter()
                    .all(|h| h.wins + h.draws + h.losses + h.broken == 0);
            // Depth-coded files take their results from the WDL file: read as the endgame.
            if table.header().is_depth_coded() && tables.is_none() {
                tables = Some(EndgameTables::open(dir, &material));
            }
            let whole = match tables.as_ref().filter(|_| table.header().is_depth_coded()) {
                Some(Ok(t)) => Some(t),
                Some(Err(e)) => {
                    let e = TableError::Corrupt {
                        path,
                        what: format!("depth-coded, and the endgame does not open: {e}"),
                    };
                    files.push((metric, name, FileStatus::Bad(e)));
                    continue;
                }
                None => None,
            };
            for &h in stored.iter().filter(|&&h| present(h)) {
                let base = dtz.as_ref().filter(|_| table.header().is_dtz_delta());
                let value = |h, i| match (whole, base) {
                    (Some(t), _) => t.value(metric, h, i),
                    (None, Some(dtz)) => table.value_over(dtz, h, i),
                    (None, None) => table.value(h, i),
                };
                let part = scan_half(value, &index, h, m);
                let st = &mut s[h as usize];
                st.max_win[m] = part.max_win[m];
                st.max_loss[m] = part.max_loss[m];
                // A DTZ50 file's wins and losses are those that hold under the rule.
                if metric == Metric::Dtz50 {
                    st.wins50 = Some(part.wins);
                    st.losses50 = Some(part.losses);
                }
                if count_outcomes {
                    (st.wins, st.draws, st.losses, st.broken) =
                        (part.wins, part.draws, part.losses, part.broken);
                }
            }
        }
        files.push((
            metric,
            name,
            FileStatus::Ok(Box::new(table.header().clone())),
        ));
        if metric == Metric::Dtz {
            dtz = Some(table);
        }
    }
    // The WDL file holds no depth: its header and checksum are reported, not scanned.
    let name = file_name(&material, Metric::Wdl);
    let path = dir.join(&name);
    let status = if !path.exists() {
        FileStatus::Missing
    } else {
        match TableFile::open_for(&path, &material, Metric::Wdl) {
            Ok(t) => FileStatus::Ok(Box::new(t.header().clone())),
            Err(e) => FileStatus::Bad(e),
        }
    };
    files.push((Metric::Wdl, name, status));
    // A symmetric endgame stores Btm only; Wtm is the same positions with colours flipped.
    if let Some(s) = stats.as_mut() {
        if material.is_symmetric() {
            s[Half::Wtm as usize] = s[Half::Btm as usize].clone();
        }
    }
    Ok(Report {
        material,
        sizes,
        broken,
        files,
        stats,
    })
}

/// The outcomes of one half of one file (its values by `value`) and its deepest values (at
/// `m`), read in parallel; broken entries are those the index decodes to no position (files
/// may store them as their neighbours). A DTZ50 file of differences read without its DTZ file
/// counts the differences as they are, which only a file set missing its DTZ file shows.
fn scan_half(
    value: impl Fn(Half, u64) -> Option<TbValue> + Sync,
    index: &EndgameIndex,
    h: Half,
    m: usize,
) -> HalfStats {
    const CHUNK: u64 = 1 << 16;
    let size = index.size(h);
    (0..size.div_ceil(CHUNK))
        .into_par_iter()
        .fold(HalfStats::default, |mut st, c| {
            for i in c * CHUNK..((c + 1) * CHUNK).min(size) {
                if index.decode(h, i).is_none() {
                    st.broken += 1;
                    continue;
                }
                match value(h, i)
                    .expect("entry within the checked range")
                    .outcome()
                {
                    Outcome::Win(n) => {
                        st.max_win[m] = st.max_win[m].max(Some(n));
                        st.wins += 1;
                    }
                    Outcome::Loss(n) => {
                        st.max_loss[m] = st.max_loss[m].max(Some(n));
                        st.losses += 1;
                    }
                    Outcome::Draw => st.draws += 1,
                    Outcome::Broken => st.broken += 1, // a legal position marked broken
                }
            }
            st
        })
        .reduce(HalfStats::default, |a, b| HalfStats {
            wins: a.wins + b.wins,
            draws: a.draws + b.draws,
            losses: a.losses + b.losses,
            broken: a.broken + b.broken,
            wins50: None,
            losses50: None,
            max_win: [0, 1, 2].map(|k| a.max_win[k].max(b.max_win[k])),
            max_loss: [0, 1, 2].map(|k| a.max_loss[k].max(b.max_loss[k])),
        })
}
