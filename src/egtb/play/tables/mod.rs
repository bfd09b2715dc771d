//! One endgame's generated tables opened together (DTM, DTZ, DTZ50 files of `egtb::format`, and
//! its WDL file where there is one), read by position or by index. The generator reads its sub-endgames through this; the prober
//! can too. Units: DTM in winner's moves (Nalimov); DTZ and DTZ50 in plies (Bourzutschky,
//! Tamplin, Haworth 2005, Sections 2-4), see `tables/README.md`.

pub mod one_ply;

use crate::chess::{Color, PieceType, Position, Square};
use crate::egtb::format::{
    file_name, from_depth, Metric, Outcome, TableError, TableFile, TableHeader, TbValue, Wdl5,
    FLAG_EQUALS_DTZ, SPAN_LOG2,
};
use crate::egtb::index::{EndgameIndex, Half, TbPosition};
use crate::egtb::material::Material;
use crate::egtb::play::tables::one_ply::{
    dtm_run, dtm_value, set_position, zeroing_values, Endgames, RunScratch,
};
use crate::memory::HugeArray;
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
    /// Some file holds depths alone (`format::ENCODING_DEPTH`): its values need the result.
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
    /// left out, taken from the system only where written; in a file in `in_file` where given
    /// (`HugeArray::zeroed_in_file`), not in anonymous memory.
    pub fn remember_dtm(&mut self, in_file: Option<&Path>) -> Result<(), TableError> {
        if let Some(h) = self.dtm_missing {
            let len = self.index.size(h) as usize;
            self.dtm_memo = Some(match in_file {
                None => HugeArray::zeroed(len).map_err(|e| TableError::BadInput(e.to_string()))?,
                Some(dir) => HugeArray::zeroed_in_file(len, dir).map_err(|e| {
                    TableError::BadInput(format!("a memo in {}: {e}", dir.display()))
                })?,
            });
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

/// Opens the sub-endgames of `material`, each from the first of `dirs` that has it, and the
/// sub-endgames of those whose DTM leaves a side out (`EndgameTables::dtm` works it out from
/// their moves), with `remember_dtm` (its memos in files in `memo_dir` where given): all a
/// build or a check of `material` reads.
pub fn open_subs<'a>(
    dirs: impl Iterator<Item = &'a Path> + Clone,
    material: &Material,
    memo_dir: Option<&Path>,
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
            t.remember_dtm(memo_dir)?;
        }
        out.push(t);
    }
    Ok(out)
}

/// Are all three files of `material` present in `dir` and valid (header and checksum)?
pub fn tables_present(dir: &Path, material: &Material) -> bool {
    EndgameTables::open(dir, material).is_ok()
}
