//! The files' last form, after the solves: the WDL file read out of DTZ's and DTZ50's values
//! (`write_wdl`), DTZ and DTZ50 rewritten depth-coded beside it (`finish_zeroing`), and one
//! side to move kept where Syzygy keeps one (`keep_one_side`).

use crate::egtb::format::plies::RULE50_PLIES;
use crate::egtb::format::{
    file_name, keep_half, Compression, FileSpec, Metric, Outcome, TableError, TableFile,
    TableWriter, TbValue, Wdl5, SPAN_LOG2,
};
use crate::egtb::index::{EndgameIndex, Half};
use crate::egtb::material::Material;
use crate::egtb::play::tables::{EndgameTables, DTM_ONE_SIDE_MEN};
use rayon::prelude::*;
use std::path::Path;

/// The most men of an endgame whose DTZ and DTZ50 are stored for one side to move
/// (`EndgameTables::keep_one_side`). Six-man tables keep both: their verification in rounds
/// and the paper's figures (`dtz_stats`) read both sides from the files.
pub const ONE_SIDE_MAX_MEN: u8 = 5;

/// Chunks of whole blocks of every width that the writers below put together in parallel, a
/// group at a time.
const CHUNK: u64 = 1 << 16;
const GROUP: u64 = 64 * CHUNK;

/// The DTZ and DTZ50 files of `material` in `dir` as the generator leaves them before its WDL
/// file: values (not depth-coded; DTZ50 as differences or not), both sides to move.
fn zeroing_files(dir: &Path, material: &Material) -> Result<[TableFile; 2], TableError> {
    let m = material.canonical().0;
    let open = |metric| TableFile::open_for(&dir.join(file_name(&m, metric)), &m, metric);
    let files = [open(Metric::Dtz)?, open(Metric::Dtz50)?];
    let index = EndgameIndex::new(&m);
    for f in &files {
        let h = f.header();
        let halves = index
            .stored_halves()
            .iter()
            .all(|&x| f.entries(x).is_some());
        if h.is_depth_coded() || !halves {
            return Err(TableError::BadInput(format!(
                "{}: not a file as the generator writes it before the WDL file",
                f.path().display()
            )));
        }
    }
    Ok(files)
}

/// DTZ's values and DTZ50's (differences resolved; none read unless `need50`) of entries
/// `range` of `half`.
fn zeroing_values_of(
    [dtz, dtz50]: &[TableFile; 2],
    half: Half,
    range: std::ops::Range<u64>,
    need50: bool,
) -> Option<[Vec<TbValue>; 2]> {
    let (mut z, mut z50) = (Vec::new(), Vec::new());
    dtz.read_range(half, range.clone(), &mut z)?;
    if !need50 {
        return Some([z, z50]);
    }
    dtz50.read_range(half, range, &mut z50)?;
    if !dtz50.header().is_dtz_delta() {
        return Some([z, z50]);
    }
    for (v, d) in z50.iter_mut().zip(&z) {
        *v = match v.raw() {
            0 => *d,
            code => TbValue::from_raw(code - 1),
        };
    }
    Some([z, z50])
}

/// What `finish_zeroing` needs to know of the generator's DTZ and DTZ50 files before it writes
/// (`write_wdl` finds it as it reads them): each half's largest values of each (the widths),
/// whether DTZ50 differs from DTZ anywhere (the flag `FLAG_EQUALS_DTZ` speaks of both sides),
/// and each half's DTZ50 depths by span (and so its deepest DTZ50).
#[derive(Clone, Default)]
pub struct ZeroingScan {
    halves: [HalfScan; 2],
    spans: [Vec<u8>; 2],
}

/// `ZeroingScan` of one half, or of a part of one.
#[derive(Clone, Copy, Default)]
struct HalfScan {
    max_raw: [u16; 2],
    differs: bool,
}

impl HalfScan {
    fn of(z: &[TbValue], z50: &[TbValue]) -> HalfScan {
        let top = |v: &[TbValue]| v.iter().map(|x| x.raw()).max().unwrap_or(0);
        HalfScan {
            max_raw: [top(z), top(z50)],
            differs: z != z50,
        }
    }

    fn and(self, o: HalfScan) -> HalfScan {
        HalfScan {
            max_raw: [0, 1].map(|k| self.max_raw[k].max(o.max_raw[k])),
            differs: self.differs || o.differs,
        }
    }
}

/// The deepest DTZ50 win or loss of `values`, in plies (0 if none): a span's byte of the
/// depths by span. None is deeper than the rule's 100 plies: a deeper value read back from a
/// file of differences is a broken entry's, stored as DTZ's (a neighbour's value), and
/// does not count.
fn deepest_depth(values: &[TbValue]) -> u16 {
    values
        .iter()
        .filter_map(|v| match v.outcome() {
            Outcome::Win(n) | Outcome::Loss(n) if n <= RULE50_PLIES => Some(n),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// The deepest DTZ50 of each half (the DTZ50 header's `max_depths` before `deepest_by_side`)
/// from its depths by span.
pub fn deepest_of_spans(spans: &[Vec<u8>; 2]) -> [u16; 2] {
    spans
        .each_ref()
        .map(|s| s.iter().copied().max().unwrap_or(0) as u16)
}

/// Adds the DTZ50 values `values`, entries `start..` of a half, to its depths by span
/// (`format::SPAN_LOG2`): each span's byte is the deepest win or loss among its entries.
pub fn add_span_depths(spans: &mut Vec<u8>, start: u64, values: &[TbValue]) {
    let span = 1u64 << SPAN_LOG2;
    let need = (start + values.len() as u64).div_ceil(span) as usize;
    if spans.len() < need {
        spans.resize(need, 0);
    }
    let (mut i, mut rest) = (start, values);
    while !rest.is_empty() {
        let n = ((i / span + 1) * span - i).min(rest.len() as u64) as usize;
        let (part, tail) = rest.split_at(n);
        let k = (i / span) as usize;
        // DTZ50 depths are at most the rule's 100 plies (`deepest_depth`).
        spans[k] = spans[k].max(deepest_depth(part) as u8);
        (i, rest) = (i + n as u64, tail);
    }
}

/// The deepest DTZ50 of each side to move (the DTZ50 header's `max_depths`) from the deepest of
/// each half: an index that stores one half (`stored`) holds both sides to move in it.
pub fn deepest_by_side(stored: &[Half], deepest: [u16; 2]) -> [u16; 2] {
    match stored {
        [h] => [deepest[*h as usize]; 2],
        _ => deepest,
    }
}

/// The WDL file's value of an entry whose DTZ and DTZ50 values are `dtz` and `dtz50`.
pub fn result_value(dtz: TbValue, dtz50: TbValue) -> TbValue {
    Wdl5::of(dtz, dtz50).map_or(TbValue::BROKEN, |r| TbValue::from_raw(r.code()))
}

/// Writes `writers` from DTZ's and DTZ50's values of every entry of `halves`, in index order:
/// each half begun and ended in all of them, `push` handed the values a group of chunks at a
/// time (read in parallel; DTZ50's only if `need50`, else empty). With `scan`, returns each
/// half's `HalfScan` and depths by span (of DTZ alone without `need50`); else empty ones.
fn write_from_zeroing(
    files: &[TableFile; 2],
    halves: &[Half],
    need50: bool,
    scan: bool,
    writers: &mut [TableWriter],
    mut push: impl FnMut(&mut [TableWriter], &[TbValue], &[TbValue]) -> Result<(), TableError>,
) -> Result<ZeroingScan, TableError> {
    let mut scans = ZeroingScan::default();
    for &h in halves {
        let size = files[0].entries(h).expect("checked: both halves");
        for w in writers.iter_mut() {
            w.begin_half(h, size)?;
        }
        for g in (0..size).step_by(GROUP as usize) {
            // Chunks start at multiples of a span: their depths by span follow one another.
            const _: () = assert!(CHUNK.is_multiple_of(1 << SPAN_LOG2));
            type Chunk = ([Vec<TbValue>; 2], HalfScan, Vec<u8>);
            let chunks: Option<Vec<Chunk>> = (g..(g + GROUP).min(size))
                .step_by(CHUNK as usize)
                .collect::<Vec<u64>>()
                .into_par_iter()
                .map(|c| {
                    let [z, z50] = zeroing_values_of(files, h, c..(c + CHUNK).min(size), need50)?;
                    let mut spans = Vec::new();
                    let scan = if scan {
                        let z50 = if need50 { &z50 } else { &z };
                        add_span_depths(&mut spans, 0, z50);
                        HalfScan::of(&z, z50)
                    } else {
                        HalfScan::default()
                    };
                    Some(([z, z50], scan, spans))
                })
                .collect();
            let chunks = chunks.ok_or_else(|| TableError::Corrupt {
                path: files[0].path().to_path_buf(),
                what: format!("half {}: a block does not decompress", h.name()),
            })?;
            for ([z, z50], scan, spans) in &chunks {
                scans.halves[h as usize] = scans.halves[h as usize].and(*scan);
                scans.spans[h as usize].extend_from_slice(spans);
                push(writers, z, z50)?;
            }
        }
        for w in writers.iter_mut() {
            w.end_half()?;
        }
    }
    Ok(scans)
}

/// Writes the WDL file of `material` into `dir` (atomically) from its DTZ and DTZ50 files,
/// as the generator leaves them (`zeroing_files`): DTZ wins and loses where DTM does, and
/// DTZ50 says which of those the 50-move rule keeps. Returns what `finish_zeroing` needs to
/// know of the two files.
pub fn write_wdl(dir: &Path, material: &Material) -> Result<ZeroingScan, TableError> {
    let files = zeroing_files(dir, material)?;
    let m = material.canonical().0;
    let halves = EndgameIndex::new(&m).stored_halves();
    let w = TableWriter::create(
        dir,
        &FileSpec {
            material: m,
            metric: Metric::Wdl,
            halves,
            max_raw: Wdl5::Win.code(),
            compression: Compression::Zstd,
            unmark_broken: true,
            delta: false,
            depths: false,
        },
    )?;
    let mut writers = [w];
    let mut codes = Vec::new();
    let scan = write_from_zeroing(&files, halves, true, true, &mut writers, |w, z, z50| {
        codes.clear();
        codes.extend(z.iter().zip(z50).map(|(&v, &v50)| result_value(v, v50)));
        w[0].push(&codes, None)
    })?;
    let [w] = writers;
    w.finish()?;
    Ok(scan)
}

/// Rewrites the DTZ and DTZ50 files of `material` in `dir`, as the generator leaves them
/// (`zeroing_files`), depth-coded (`format::ENCODING_DEPTH`), once the WDL file holds the results
/// (`write_wdl`). With `one_side`, only the half whose depth-coded DTZ section is smaller is
/// kept, as Syzygy chooses (the other is answered by one ply, `values_by_one_ply`); in an
/// endgame of `DTM_ONE_SIDE_MEN` the DTM file, written already, keeps the same half, the one
/// whose DTM and DTZ sections are together the smaller. `scan` is `write_wdl`'s. Returns the
/// half kept, None for both.
pub fn finish_zeroing(
    dir: &Path,
    material: &Material,
    one_side: bool,
    scan: &ZeroingScan,
) -> Result<Option<Half>, TableError> {
    let files = zeroing_files(dir, material)?;
    let m = material.canonical().0;
    let stored = EndgameIndex::new(&m).stored_halves();
    let max_raw = scan.halves.map(|h| h.max_raw);
    let differs = stored.iter().any(|&h| scan.halves[h as usize].differs);
    let max_depth50 = deepest_by_side(stored, deepest_of_spans(&scan.spans));
    let writer = |metric: Metric, halves: &[Half]| {
        let max_raw = halves
            .iter()
            .map(|&h| max_raw[h as usize][(metric == Metric::Dtz50) as usize])
            .max()
            .unwrap_or(0);
        TableWriter::create(
            dir,
            &FileSpec {
                material: m,
                metric,
                halves,
                max_raw,
                compression: Compression::Zstd,
                unmark_broken: true,
                delta: metric == Metric::Dtz50,
                depths: true,
            },
        )
    };
    // DTZ of both sides first: the half kept is the one that compresses smaller as stored.
    let mut dtz = [writer(Metric::Dtz, stored)?];
    write_from_zeroing(&files, stored, false, false, &mut dtz, |w, z, _| {
        w[0].push(z, None)
    })?;
    let [dtz] = dtz;
    let dtz_path = dtz.finish()?;
    let keep = if one_side && stored.len() == 2 {
        let dtm_path = dir.join(file_name(&m, Metric::Dtm));
        let dtm_too = m.men() == DTM_ONE_SIDE_MEN;
        let sized = [Some(&dtz_path), dtm_too.then_some(&dtm_path)];
        let files = sized
            .iter()
            .flatten()
            .map(|p| TableFile::open(p))
            .collect::<Result<Vec<_>, _>>()?;
        let keep = smaller_half(&files.iter().collect::<Vec<_>>(), stored);
        drop(files);
        for p in sized.into_iter().flatten() {
            keep_half(p, keep)?;
        }
        Some(keep)
    } else {
        None
    };
    let halves: Vec<Half> = match keep {
        Some(h) => vec![h],
        None => stored.to_vec(),
    };
    let mut dtz50 = [writer(Metric::Dtz50, &halves)?];
    write_from_zeroing(&files, &halves, true, false, &mut dtz50, |w, z, z50| {
        w[0].push(z50, Some(z))
    })?;
    let [mut dtz50] = dtz50;
    if differs {
        dtz50.mark_differs_from_dtz();
    }
    dtz50.record_max_depths(max_depth50);
    for &h in stored {
        dtz50.record_depth_spans(h, scan.spans[h as usize].clone());
    }
    dtz50.finish()?;
    Ok(keep)
}

/// The half whose sections in two-sided `files` are together the smaller as stored (wtm on a
/// tie): the side that files of one side to move keep.
fn smaller_half(files: &[&TableFile], halves: &[Half]) -> Half {
    halves
        .iter()
        .copied()
        .min_by_key(|&h| {
            let bytes: u64 = files.iter().filter_map(|f| f.stored_bytes(h)).sum();
            (bytes, h as u8)
        })
        .expect("two halves")
}

/// Rewrites the files of `t` in `dir` with one side to move: DTZ and DTZ50, and DTM in an
/// endgame of `DTM_ONE_SIDE_MEN`, keep the half whose sections are together the smaller, as
/// Syzygy chooses (the other is answered by one ply, `EndgameTables::values_by_one_ply`), or
/// DTM the half DTZ keeps already. The WDL file must be there: the other side's moves read
/// it. Returns the half kept, None where there is nothing to do (the index stores one half
/// only, or the files one side already).
pub fn keep_one_side(t: &EndgameTables, dir: &Path) -> Result<Option<Half>, TableError> {
    let halves = t.index().stored_halves();
    let material = t.material();
    let dtm_too = material.men() == DTM_ONE_SIDE_MEN && t.dtm_missing().is_none();
    if halves.len() < 2 || (t.zeroing_missing().is_some() && !dtm_too) {
        return Ok(None);
    }
    if t.file(Metric::Wdl).is_none() {
        return Err(TableError::BadInput(format!(
            "{material}: one side's DTZ needs the WDL file"
        )));
    }
    let file = |m| t.file(m).expect("the distance files are there");
    let mut metrics = vec![Metric::Dtz50, Metric::Dtz];
    let keep = match t.zeroing_missing() {
        Some(missing) => {
            metrics.clear();
            other_half(halves, missing)
        }
        None if dtm_too => smaller_half(&[file(Metric::Dtm), file(Metric::Dtz)], halves),
        None => smaller_half(&[file(Metric::Dtz)], halves),
    };
    if dtm_too {
        metrics.push(Metric::Dtm);
    }
    for metric in metrics {
        keep_half(&dir.join(file_name(&material, metric)), keep)?;
    }
    Ok(Some(keep))
}

/// The one of two `halves` that is not `h`.
fn other_half(halves: &[Half], h: Half) -> Half {
    halves
        .iter()
        .copied()
        .find(|&x| x != h)
        .expect("two halves")
}
