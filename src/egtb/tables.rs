//! One endgame's generated tables opened together (DTM, DTZ, DTZ50 files of `egtb::file`, and
//! its WDL file where there is one), read by position or by index. The generator reads its sub-endgames through this; the prober
//! can too. Units: DTM in winner's moves (Nalimov); DTZ and DTZ50 in plies (Bourzutschky,
//! Tamplin, Haworth 2005, Sections 2-4), see `tables/README.md`.

use super::file::{
    file_name, from_depth, keep_half, Compression, FileSpec, Metric, Outcome, TableError,
    TableFile, TableHeader, TableWriter, TbValue, Wdl5, FLAG_EQUALS_DTZ, SPAN_LOG2,
};
use super::index::{EndgameIndex, Half, TbPosition};
use super::material::Material;
use super::one_ply::{dtm_run, dtm_value, set_position, zeroing_values, Endgames, RunScratch};
use super::plies::RULE50_PLIES;
use crate::chess::{Color, PieceType, Position, Square};
use crate::memory::HugeArray;
use rayon::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicU16, Ordering::Relaxed};

/// What `EndgameTables::dtm_by_runs` keeps from run to run: a thread's, so that it
/// allocates nothing once warm.
#[derive(Default)]
pub struct DtmRuns {
    /// The run's other men and side to move.
    frame: Option<TbPosition>,
    entries: Vec<u64>,
    run: Vec<(Square, Wdl5)>,
    scratch: RunScratch,
}

/// The most men of an endgame whose DTZ and DTZ50 are stored for one side to move
/// (`EndgameTables::keep_one_side`). Six-man tables keep both: their verification in rounds
/// and the paper's figures (`dtz_stats`) read both sides from the files.
pub const ONE_SIDE_MAX_MEN: u8 = 5;

/// The men of endgames whose DTM too is stored for one side to move (the half DTZ keeps),
/// where it is 70% of the bytes. Tables of fewer men keep both sides: they are small, and the
/// search reads their mates at every node without a ply of moves.
pub const DTM_ONE_SIDE_MEN: u8 = 5;

/// The three files of one endgame and its index.
pub struct EndgameTables {
    material: Material,
    index: EndgameIndex,
    files: [TableFile; 3],
    /// The WDL file: written with the three by this version's generator, absent from older
    /// table directories (`result` then reads DTM and DTZ50).
    wdl: Option<TableFile>,
    /// The half of the index that DTZ and DTZ50 leave out, if they store one side only.
    zeroing_missing: Option<Half>,
    /// The half that DTM leaves out (then also DTZ's), if it stores one side only.
    dtm_missing: Option<Half>,
    /// DTM of that half as worked out by one ply, kept where `remember_dtm` asked for it: the
    /// raw value plus one, 0 where not yet worked out.
    dtm_memo: Option<HugeArray<AtomicU16>>,
    /// Some file holds depths alone (`file::ENCODING_DEPTH`): its values need the result.
    depth_coded: bool,
}

impl EndgameTables {
    /// Opens and verifies (header and checksum) the three files of `material` in `dir`, and
    /// its WDL file if there is one (one present but damaged is refused as the others are).
    pub fn open(dir: &Path, material: &Material) -> Result<EndgameTables, TableError> {
        let m = material.canonical().0;
        let open = |metric| TableFile::open_for(&dir.join(file_name(&m, metric)), &m, metric);
        let files = [open(Metric::Dtm)?, open(Metric::Dtz)?, open(Metric::Dtz50)?];
        let wdl = match dir.join(file_name(&m, Metric::Wdl)).try_exists() {
            Ok(true) => Some(open(Metric::Wdl)?),
            _ => None,
        };
        // DTZ and DTZ50 stored for one side need the two-sided results for the other's moves.
        let index = EndgameIndex::new(&m);
        let [_, dtz, dtz50] = &files;
        let zeroing_missing = index
            .stored_halves()
            .iter()
            .copied()
            .find(|&h| dtz.entries(h).is_none());
        if dtz.header().entries != dtz50.header().entries
            || (zeroing_missing.is_some() && wdl.is_none())
        {
            return Err(TableError::Corrupt {
                path: dtz50.path().to_path_buf(),
                what: "DTZ and DTZ50 store different halves, or one side without a WDL file".into(),
            });
        }
        let dtm_missing = index
            .stored_halves()
            .iter()
            .copied()
            .find(|&h| files[0].entries(h).is_none());
        if dtm_missing.is_some() && dtm_missing != zeroing_missing {
            return Err(TableError::Corrupt {
                path: files[0].path().to_path_buf(),
                what: "DTM stores one side, and DTZ not the same one".into(),
            });
        }
        // Depths by span stand for the whole index half, each byte for `SPAN_LOG2` entries.
        let spans_fit = Half::BOTH.iter().all(|&h| {
            dtz50.header().depth_spans[h as usize].is_none_or(|(_, n)| {
                index.stored_halves().contains(&h) && n == index.size(h).div_ceil(1 << SPAN_LOG2)
            })
        });
        if !spans_fit {
            return Err(TableError::Corrupt {
                path: dtz50.path().to_path_buf(),
                what: "depths by span do not cover the index".into(),
            });
        }
        let depth_coded = files.iter().any(|f| f.header().is_depth_coded());
        if let Some(f) = files.iter().find(|f| f.header().is_depth_coded()) {
            if wdl.is_none() {
                return Err(TableError::Corrupt {
                    path: f.path().to_path_buf(),
                    what: "depths alone, and no WDL file with their results".into(),
                });
            }
        }
        Ok(EndgameTables {
            material: m,
            index,
            files,
            wdl,
            zeroing_missing,
            dtm_missing,
            dtm_memo: None,
            depth_coded,
        })
    }

    /// Keeps the DTM values `dtm` works out by one ply, for a reader that asks for many of
    /// them (the generator's and the verifier's sub-endgames): 2 bytes an entry of the half
    /// left out, taken from the system only where written.
    pub fn remember_dtm(&mut self) -> Result<(), crate::memory::OutOfMemory> {
        if let Some(h) = self.dtm_missing {
            self.dtm_memo = Some(HugeArray::zeroed(self.index.size(h) as usize)?);
        }
        Ok(())
    }

    /// The half of the index that DTM leaves out, if it stores one side only.
    #[inline]
    pub fn dtm_missing(&self) -> Option<Half> {
        self.dtm_missing
    }

    /// DTM at an entry, from its file or, for a side the file leaves out, by one ply
    /// (`one_ply::dtm_value`), `all` holding the endgames that the moves reach (and theirs,
    /// where their DTM is left out too). None if out of range or a table needed is not at
    /// hand; a broken entry of the side left out reads as broken.
    pub fn dtm(&self, half: Half, idx: u64, all: &(impl Endgames + ?Sized)) -> Option<TbValue> {
        self.dtm_with(half, idx, None, all)
    }

    /// `dtm`, where the caller may have read the entry's result already (`result`).
    #[inline]
    pub fn dtm_with(
        &self,
        half: Half,
        idx: u64,
        result: Option<Wdl5>,
        all: &(impl Endgames + ?Sized),
    ) -> Option<TbValue> {
        if self.dtm_missing != Some(half) {
            let result = match result {
                Some(r) => Some(r),
                None => self.result_for_depths(half, idx)?,
            };
            return self.value_with(Metric::Dtm, half, idx, result);
        }
        let memo = self.dtm_memo.as_ref().and_then(|m| m.get(idx as usize));
        if let Some(code) = memo.map(|c| c.load(Relaxed)).filter(|&c| c != 0) {
            return Some(TbValue::from_raw(code - 1));
        }
        let v = match self.index.decode(half, idx) {
            None => TbValue::BROKEN,
            Some(tb) => {
                let r = match result {
                    Some(r) => r,
                    None => self.result(half, idx)?,
                };
                dtm_value(&tb, r, self, all)?
            }
        };
        if let Some(c) = memo {
            c.store(v.raw() + 1, Relaxed);
        }
        Some(v)
    }

    /// These tables opened again and held as `hold_results_and_dtm` holds them, for a reader
    /// that reads around every entry of the side DTM leaves out once (`dtm_by_runs`), then
    /// lets them go. None where the memory or the files do not allow it.
    pub fn held_copy(&self) -> Option<EndgameTables> {
        crate::memory::check(self.results_and_dtm_bytes()).ok()?;
        let dir = self.files[0].path().parent()?;
        let mut t = EndgameTables::open(dir, &self.material).ok()?;
        t.hold_results_and_dtm().ok()?;
        Some(t)
    }

    /// The man by whose squares `dtm_by_runs` works out DTM of `half`: one of a kind, not a
    /// king, the side to move's where it has one. None where `half` is stored, or the
    /// endgame has pawns (entries outside the main zone) or the same men on both sides.
    pub fn run_man(&self, half: Half) -> Option<(Color, PieceType)> {
        let m = &self.material;
        if self.dtm_missing != Some(half) || m.has_pawns() || m.is_symmetric() {
            return None;
        }
        let stm = half.stm();
        [stm, !stm]
            .into_iter()
            .flat_map(|c| {
                [
                    PieceType::Queen,
                    PieceType::Rook,
                    PieceType::Bishop,
                    PieceType::Knight,
                ]
                .map(|k| (c, k))
            })
            .find(|&(c, k)| m.count(c, k) == 1)
    }

    /// `dtm` of the entries of `half`, the half DTM leaves out, at `range` of the order in
    /// which `man` (`run_man`) moves fastest (`EndgameIndex::each_with_man_fastest`): a run of
    /// positions that differ only in his square at a time (`one_ply::dtm_run`), so that the
    /// entries of their successors are numbered a frame at a time. `f(entry, value)` for each
    /// entry, as `dtm` would give it.
    pub fn dtm_by_runs(
        &self,
        half: Half,
        range: std::ops::Range<u64>,
        man: (Color, PieceType),
        all: &(impl Endgames + ?Sized),
        runs: &mut DtmRuns,
        mut f: impl FnMut(u64, Option<TbValue>),
    ) {
        debug_assert_eq!(self.run_man(half), Some(man));
        let (mc, mk) = (man.0.index(), man.1.index());
        let size = self.index.size(half);
        let flush = |runs: &mut DtmRuns, f: &mut dyn FnMut(u64, Option<TbValue>)| {
            if let Some(frame) = runs.frame.take() {
                let DtmRuns {
                    entries,
                    run,
                    scratch,
                    ..
                } = runs;
                dtm_run(&frame, man, run, self, all, scratch, |k, v| {
                    f(entries[k], v)
                });
                run.clear();
                entries.clear();
            }
        };
        self.index.each_with_man_fastest(half, range, man, |idx| {
            if idx >= size {
                return;
            }
            let Some(mut pos) = self.index.decode(half, idx) else {
                return f(idx, Some(TbValue::BROKEN));
            };
            let Some(result) = self.result(half, idx) else {
                return f(idx, None);
            };
            let s = pos.pieces[mc][mk].lsb();
            pos.pieces[mc][mk].clear(s);
            if runs.frame != Some(pos) {
                flush(runs, &mut f);
                runs.frame = Some(pos);
            }
            runs.entries.push(idx);
            runs.run.push((s, result));
        });
        flush(runs, &mut f);
    }

    /// Opens the three files as `open` does, then holds them decompressed in memory.
    pub fn open_loaded(dir: &Path, material: &Material) -> Result<EndgameTables, TableError> {
        let mut t = EndgameTables::open(dir, material)?;
        for f in t.files.iter_mut().chain(t.wdl.as_mut()) {
            f.load()?;
        }
        Ok(t)
    }

    /// Bytes that `hold_results_and_dtm` takes.
    pub fn results_and_dtm_bytes(&self) -> u64 {
        let dtm = &self.files[Metric::Dtm as usize - 1];
        dtm.loaded_bytes() + self.wdl.as_ref().map_or(0, TableFile::loaded_bytes)
    }

    /// Holds the WDL and DTM files decompressed in memory: what a build reads of its
    /// sub-endgames (the results and the mates of the positions its captures and promotions
    /// reach, and of the positions around those whose DTM is left out), many times each and out
    /// of order, so that no read decompresses a block again.
    pub fn hold_results_and_dtm(&mut self) -> Result<(), TableError> {
        self.files[Metric::Dtm as usize - 1].load()?;
        match &mut self.wdl {
            Some(f) => f.load(),
            None => Ok(()),
        }
    }

    pub fn material(&self) -> Material {
        self.material
    }

    pub fn index(&self) -> &EndgameIndex {
        &self.index
    }

    /// The file of a distance metric, or the WDL file (None if there is none).
    pub fn file(&self, metric: Metric) -> Option<&TableFile> {
        match metric {
            Metric::Wdl => self.wdl.as_ref(),
            m => Some(&self.files[m as usize - 1]),
        }
    }

    /// The header of one distance metric's file.
    pub fn header(&self, metric: Metric) -> &TableHeader {
        debug_assert!(
            metric != Metric::Wdl,
            "WDL has its own file, if any: `file`"
        );
        self.files[metric as usize - 1].header()
    }

    /// The result with the 50-move rule at an entry: one value of the WDL file, or DTM's and
    /// DTZ50's where there is none. None if out of range, the half is absent, or the entry is
    /// marked broken (a WDL file gives a broken entry a neighbour's result: the index tells
    /// broken entries).
    #[inline]
    pub fn result(&self, half: Half, idx: u64) -> Option<Wdl5> {
        match &self.wdl {
            Some(f) => Wdl5::from_code(f.value(half, idx)?.raw()),
            None => Wdl5::of(
                self.value(Metric::Dtm, half, idx)?,
                self.value(Metric::Dtz50, half, idx)?,
            ),
        }
    }

    /// The value of one distance metric at an entry (None if out of range or the half is
    /// absent). The value of a broken entry is the broken mark only where `marks_broken`.
    #[inline]
    pub fn value(&self, metric: Metric, half: Half, idx: u64) -> Option<TbValue> {
        let result = self.result_for_depths(half, idx)?;
        self.value_with(metric, half, idx, result)
    }

    /// `value`, where the caller has read the entry's result already (`result`; None where
    /// no file is depth-coded, which needs it).
    #[inline]
    pub fn value_with(
        &self,
        metric: Metric,
        half: Half,
        idx: u64,
        result: Option<Wdl5>,
    ) -> Option<TbValue> {
        debug_assert!(
            metric != Metric::Wdl,
            "a result is not a `TbValue`: `result`"
        );
        let file = &self.files[metric as usize - 1];
        let code = file.value(half, idx)?;
        if metric == Metric::Dtz50 && file.header().is_dtz_delta() {
            return self.dtz50_of(
                code,
                || self.value_with(Metric::Dtz, half, idx, result),
                result,
            );
        }
        Some(decoded(file, metric, code, result))
    }

    /// DTZ50 from a code of its file of differences, `dtz` giving DTZ's value if needed.
    #[inline]
    fn dtz50_of(
        &self,
        code: TbValue,
        dtz: impl FnOnce() -> Option<TbValue>,
        result: Option<Wdl5>,
    ) -> Option<TbValue> {
        let Some(r) = result.filter(|_| self.files[2].header().is_depth_coded()) else {
            return match code.raw() {
                0 => dtz(),
                c => Some(TbValue::from_raw(c - 1)),
            };
        };
        // A draw under the rule holds no depth: no DTZ read.
        if !matches!(r, Wdl5::Win | Wdl5::Loss) {
            return Some(TbValue::DRAW);
        }
        let depth = match code.raw() {
            0 => match dtz()?.outcome() {
                Outcome::Win(n) | Outcome::Loss(n) => n,
                _ => 0, // a broken entry's garbage
            },
            c => c - 1,
        };
        Some(from_depth(Metric::Dtz50, r, depth))
    }

    /// The result where some file is depth-coded: None if out of range, Some(None) where no
    /// result is needed (the `result` argument of `value_with` and `zeroing_pair_with`).
    #[inline]
    pub fn result_for_depths(&self, half: Half, idx: u64) -> Option<Option<Wdl5>> {
        if !self.depth_coded {
            return Some(None);
        }
        self.result(half, idx).map(Some)
    }

    /// Do broken entries read as broken in all three files? (Files of format 1 mark them;
    /// the generator now stores them as their neighbours, which compresses better.)
    pub fn marks_broken(&self) -> bool {
        self.files.iter().all(|f| f.header().marks_broken())
    }

    /// The entry of a position of this endgame (either colouring), None if not indexable.
    #[inline]
    pub fn entry(&self, pos: &TbPosition) -> Option<(Half, u64)> {
        self.index.index(pos)
    }

    /// DTM, DTZ and DTZ50 at an entry (None if out of range or the half is absent: for DTZ and
    /// DTZ50 of a side they leave out, `values_by_one_ply`).
    #[inline]
    pub fn values(&self, half: Half, idx: u64) -> Option<[TbValue; 3]> {
        let result = self.result_for_depths(half, idx)?;
        let [dtz, dtz50] = self.zeroing_pair_with(half, idx, result)?;
        Some([self.value_with(Metric::Dtm, half, idx, result)?, dtz, dtz50])
    }

    /// DTZ and DTZ50 at an entry, as `values`.
    #[inline]
    pub fn zeroing_pair(&self, half: Half, idx: u64) -> Option<[TbValue; 2]> {
        let result = self.result_for_depths(half, idx)?;
        self.zeroing_pair_with(half, idx, result)
    }

    /// `zeroing_pair` with the result read (as `value_with`).
    #[inline]
    pub fn zeroing_pair_with(
        &self,
        half: Half,
        idx: u64,
        result: Option<Wdl5>,
    ) -> Option<[TbValue; 2]> {
        let [_, dtz_file, dtz50_file] = &self.files;
        let dtz = decoded(dtz_file, Metric::Dtz, dtz_file.value(half, idx)?, result);
        // A file of differences that are all 0 holds nothing to read.
        if dtz50_file.header().flags & FLAG_EQUALS_DTZ != 0 {
            return Some([dtz, dtz]);
        }
        let code50 = dtz50_file.value(half, idx)?;
        // A DTZ50 code of 0 is the DTZ value just read: no second lookup.
        let dtz50 = if dtz50_file.header().is_dtz_delta() {
            self.dtz50_of(code50, || Some(dtz), result)?
        } else {
            decoded(dtz50_file, Metric::Dtz50, code50, result)
        };
        Some([dtz, dtz50])
    }

    /// The deepest DTZ50 in plies of a half, stored or left out, where its file records it.
    #[inline]
    pub fn dtz50_max_depth(&self, half: Half) -> Option<u16> {
        self.files[2].header().max_depths[half as usize]
    }

    /// The deepest DTZ50 in plies that entry `idx` of `half` may have: its span's (the DTZ50
    /// file's depths by span), else the half's (`dtz50_max_depth`), where recorded.
    #[inline]
    pub fn dtz50_depth_bound(&self, half: Half, idx: u64) -> Option<u16> {
        self.files[2]
            .span_depth(half, idx)
            .or_else(|| self.dtz50_max_depth(half))
    }

    /// The half of the index that DTZ and DTZ50 leave out, if they store one side only.
    #[inline]
    pub fn zeroing_missing(&self) -> Option<Half> {
        self.zeroing_missing
    }

    /// `values` at any entry of the index: the values of a side the files leave out by one ply
    /// (`one_ply`), with `others` for the sub-endgames (`dtm`) and `pos` as scratch. None also
    /// for a broken entry of that side.
    pub fn values_by_one_ply(
        &self,
        half: Half,
        idx: u64,
        others: &(impl Endgames + ?Sized),
        pos: &mut Position,
    ) -> Option<[TbValue; 3]> {
        if self.zeroing_missing() != Some(half) {
            return self.values(half, idx);
        }
        let dtm = self.dtm(half, idx, others)?;
        if dtm == TbValue::BROKEN {
            return None;
        }
        let tb = self.index.decode(half, idx)?;
        set_position(pos, &tb);
        let [dtz, dtz50] = zeroing_values(pos, &tb, self, others)?;
        Some([dtm, dtz, dtz50])
    }

    /// Are the DTZ and DTZ50 files the same values (same payload, by its checksum)? Then the
    /// 50-move rule changes no result in this endgame. False does not say it does.
    pub fn rule50_changes_nothing(&self) -> bool {
        let [_, dtz, dtz50] = &self.files;
        if dtz50.header().is_dtz_delta() {
            return dtz50.header().flags & FLAG_EQUALS_DTZ != 0;
        }
        let key = |f: &TableFile| {
            let h = f.header();
            (
                h.value_width,
                h.compression,
                h.entries,
                h.payload_len,
                h.payload_hash,
            )
        };
        key(dtz) == key(dtz50)
    }

    /// DTM, DTZ and DTZ50 of a position, from the side to move's point of view.
    pub fn probe(&self, pos: &TbPosition) -> Option<[TbValue; 3]> {
        let (half, idx) = self.entry(pos)?;
        self.values(half, idx)
    }
}

/// The value of a stored code of `file` (of `metric`): the code itself, or a depth with the
/// entry's result (`result`: None only where no file is depth-coded).
#[inline]
fn decoded(file: &TableFile, metric: Metric, code: TbValue, result: Option<Wdl5>) -> TbValue {
    match result.filter(|_| file.header().is_depth_coded()) {
        Some(r) => from_depth(metric, r, code.raw()),
        None => code,
    }
}

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
/// (`file::SPAN_LOG2`): each span's byte is the deepest win or loss among its entries.
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
/// (`zeroing_files`), depth-coded (`file::ENCODING_DEPTH`), once the WDL file holds the results
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
        let keep = smaller_half(&files, stored);
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
fn smaller_half(files: &[TableFile], halves: &[Half]) -> Half {
    halves
        .iter()
        .copied()
        .min_by_key(|&h| {
            let bytes: u64 = files.iter().filter_map(|f| f.stored_bytes(h)).sum();
            (bytes, h as u8)
        })
        .expect("two halves")
}

impl EndgameTables {
    /// Rewrites the files of these tables in `dir` with one side to move: DTZ and DTZ50, and
    /// DTM in an endgame of `DTM_ONE_SIDE_MEN`, keep the half whose sections are together the
    /// smaller, as Syzygy chooses (the other is answered by one ply, `values_by_one_ply`), or
    /// DTM the half DTZ keeps already. The WDL file must be there: the other side's moves read
    /// it. Returns the half kept, None where there is nothing to do (the index stores one half
    /// only, or the files one side already).
    pub fn keep_one_side(&self, dir: &Path) -> Result<Option<Half>, TableError> {
        let halves = self.index.stored_halves();
        let dtm_too = self.material.men() == DTM_ONE_SIDE_MEN && self.dtm_missing.is_none();
        if halves.len() < 2 || (self.zeroing_missing.is_some() && !dtm_too) {
            return Ok(None);
        }
        if self.wdl.is_none() {
            return Err(TableError::BadInput(format!(
                "{}: one side's DTZ needs the WDL file",
                self.material
            )));
        }
        let mut metrics = vec![Metric::Dtz50, Metric::Dtz];
        let keep = match self.zeroing_missing {
            Some(missing) => {
                metrics.clear();
                other_half(halves, missing)
            }
            None if dtm_too => smaller_half(&self.files[..2], halves),
            None => smaller_half(&self.files[1..2], halves),
        };
        if dtm_too {
            metrics.push(Metric::Dtm);
        }
        for metric in metrics {
            keep_half(&dir.join(file_name(&self.material, metric)), keep)?;
        }
        Ok(Some(keep))
    }
}

/// The one of two `halves` that is not `h`.
fn other_half(halves: &[Half], h: Half) -> Half {
    halves
        .iter()
        .copied()
        .find(|&x| x != h)
        .expect("two halves")
}

/// Opens the sub-endgames of `material`, each from the first of `dirs` that has it, and the
/// sub-endgames of those whose DTM leaves a side out (`EndgameTables::dtm` works it out from
/// their moves), with `remember_dtm`: all a build or a check of `material` reads.
pub fn open_subs<'a>(
    dirs: impl Iterator<Item = &'a Path> + Clone,
    material: &Material,
) -> Result<Vec<EndgameTables>, TableError> {
    let mut out: Vec<EndgameTables> = Vec::new();
    let mut wanted: Vec<Material> = material.sub_endgames();
    while let Some(m) = wanted.pop() {
        if m.men() <= 2 || out.iter().any(|t| t.material() == m) {
            continue;
        }
        let mut first = None;
        let mut found = None;
        for d in dirs.clone() {
            match EndgameTables::open(d, &m) {
                Ok(t) => {
                    found = Some(t);
                    break;
                }
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        let mut t = found.ok_or_else(|| first.expect("at least one directory"))?;
        if t.dtm_missing().is_some() {
            wanted.extend(m.sub_endgames());
            t.remember_dtm()
                .map_err(|e| TableError::BadInput(e.to_string()))?;
        }
        out.push(t);
    }
    Ok(out)
}

/// Are all three files of `material` present in `dir` and valid (header and checksum)?
pub fn tables_present(dir: &Path, material: &Material) -> bool {
    EndgameTables::open(dir, material).is_ok()
}
