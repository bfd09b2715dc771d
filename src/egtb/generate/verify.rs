//! Independent verification of generated tables: every entry's three stored values must equal
//! the minimax of its successors' stored values (in this table or a sub-table), with the
//! successors found by the chess core's legal move generator (`crate::chess::movegen`), not by
//! the generator's own move and un-move code. Local agreement everywhere, with mates and
//! stalemates checked directly, implies the tables are right (induction on depth).

use super::solve::to_file_value;
use crate::chess::{legal_moves, Position, Square};
use crate::egtb::format::plies::{
    backed, capped_at_rule50, dtm_plies, loss, preference, wdl_of_result, zeroing, CODE_DRAW,
    CODE_NONE,
};
use crate::egtb::format::{Metric, Outcome, TbValue, Wdl5};
use crate::egtb::index::{EndgameIndex, Half, TbPosition};
use crate::egtb::play::tables::one_ply::{set_position, successor, Effect};
use crate::egtb::play::tables::EndgameTables;
use crate::memory::{HugeArray, OutOfMemory};
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// What a verification found.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    /// Entries checked (legal positions, both halves).
    pub checked: u64,
    /// Broken entries (no position): must hold the broken value.
    pub broken: u64,
    /// Entries whose stored value differs from the minimax of their successors (any metric).
    pub disagreements: u64,
    /// A few disagreements, for the report: (half, index, metric, stored, computed).
    pub examples: Vec<String>,
    /// Seconds that earlier, stopped runs spent on the rounds this one took from their record
    /// (`verify_by_halves`).
    pub earlier_seconds: f64,
}

/// The values of the side to move that the files leave out (`EndgameTables::zeroing_missing`,
/// and `dtm_missing`, the same half where DTM leaves one out): that half is checked first, and
/// the minimax of each of its entries, which is how a reader works the side out (`one_ply`),
/// is kept here for the check of the stored half, whose moves lead to it. Local agreement
/// everywhere then proves both sides right.
#[derive(Default)]
struct Derived {
    half: Option<Half>,
    /// Whether DTM too is worked out (`dtm_missing`), else read from the file.
    dtm: bool,
    /// Plies codes of every entry of `half` (broken: `CODE_NONE`), packed as `PackedHalf`'s.
    /// A code that does not fit its field is stored as the field's largest, which then
    /// disagrees with the entry's minimax: reported, never passed.
    codes: Vec<AtomicU32>,
}

impl Derived {
    fn new(table: &EndgameTables) -> Derived {
        let Some(half) = table.zeroing_missing() else {
            return Derived::default();
        };
        Derived {
            half: Some(half),
            dtm: table.dtm_missing().is_some(),
            codes: (0..table.index().size(half))
                .map(|_| AtomicU32::new(0))
                .collect(),
        }
    }

    /// Keeps an entry's three plies codes as worked out.
    fn set(&self, idx: u64, codes: [u16; 3]) {
        self.codes[idx as usize].store(pack(codes.map(|c| c as u32)), Relaxed);
    }

    /// DTM, DTZ and DTZ50 of an entry of `table`, stored or worked out.
    #[inline]
    fn values(&self, table: &EndgameTables, half: Half, idx: u64) -> Option<[TbValue; 3]> {
        if self.half != Some(half) {
            return table.values(half, idx);
        }
        let [dtm, dtz, dtz50] = unpack(self.codes.get(idx as usize)?.load(Relaxed));
        let dtm = if self.dtm {
            to_file_value(Metric::Dtm, dtm)
        } else {
            table.value(Metric::Dtm, half, idx)?
        };
        Some([dtm, TbValue::from_raw(dtz), TbValue::from_raw(dtz50)])
    }

    /// Codes in plies of an entry's three values (DTM converted from moves).
    #[inline]
    fn plies(&self, table: &EndgameTables, half: Half, idx: u64) -> [u16; 3] {
        let [dtm, dtz, dtz50] = self
            .values(table, half, idx)
            .unwrap_or([TbValue::BROKEN; 3]);
        [dtm_plies(dtm), dtz.raw(), dtz50.raw()]
    }
}

impl VerifyReport {
    fn add(&mut self, other: VerifyReport) {
        self.checked += other.checked;
        self.broken += other.broken;
        self.disagreements += other.disagreements;
        self.earlier_seconds += other.earlier_seconds;
        let room = 10usize.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
    }
}

/// Checks `table` against itself and its sub-endgames `subs` (every one it needs; bare kings
/// are a draw without a table); `bar` counts the entries done.
pub fn verify(table: &EndgameTables, subs: &[EndgameTables], bar: &ProgressBar) -> VerifyReport {
    start_bar(table, bar);
    let derived = Derived::new(table);
    let mut halves = table.index().stored_halves().to_vec();
    halves.sort_by_key(|&h| Some(h) != derived.half);
    let mut report = VerifyReport::default();
    for half in halves {
        let all = 0..table.index().size(half);
        report.add(verify_range(table, subs, &derived, half, all, None, bar));
    }
    report
}

/// `verify` for a table whose three files do not fit in memory decompressed (KRBKNN: 33 GB):
/// half by half, in rounds (`rounds`), each with the entries that its checked positions' moves
/// lead to held packed (`PackedHalf`) and the checked entries read in order through the block
/// cache. None if a value does not fit the packing. Each round done is recorded in
/// `checkpoint` (`Checkpoint`), and a later run over the same files starts after the rounds
/// recorded there.
pub fn verify_by_halves(
    table: &EndgameTables,
    subs: &[EndgameTables],
    bar: &ProgressBar,
    checkpoint: &Path,
) -> io::Result<Option<VerifyReport>> {
    if table.zeroing_missing().is_some() {
        // Six-man tables are written with both sides (`one_ply_side`): nothing to do here.
        return Ok(None);
    }
    start_bar(table, bar);
    let index = table.index();
    let stored = index.stored_halves();
    let mut record = Checkpoint::open(checkpoint, table);
    let mut report = VerifyReport::default();
    let mut number = 0;
    for &half in stored {
        // Moves lead to the other half; with one half stored, back into this one (flipped).
        let other = Half::of(!half.stm());
        let target = if stored.contains(&other) { other } else { half };
        for round in rounds(index, half, target) {
            number += 1;
            if let Some((done, seconds)) = record.done(number) {
                report.add(done.clone());
                report.earlier_seconds += seconds;
                bar.inc(round.checked.iter().map(|r| r.end - r.start).sum());
                continue;
            }
            let start = Instant::now();
            let packed = PackedHalf::pack(table, target, round.target)
                .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
            let Some(packed) = packed else {
                // The whole table is verified another way: the record is of no use.
                record.finish();
                return Ok(None);
            };
            let mut part = VerifyReport::default();
            for range in round.checked {
                let none = Derived::default();
                part.add(verify_range(
                    table,
                    subs,
                    &none,
                    half,
                    range,
                    Some(&packed),
                    bar,
                ));
            }
            record.add(number, &part, start.elapsed().as_secs_f64())?;
            report.add(part);
        }
    }
    record.finish();
    Ok(Some(report))
}

/// The rounds of a verification in rounds already done, kept in a small file beside the
/// tables, so that a six-man verification (KRBKNN: about an hour) stopped halfway goes on
/// where it was. A round counts only for the same three files: the first line names the
/// endgame and the files' payload checksums, and anything else is ignored and replaced.
struct Checkpoint {
    path: PathBuf,
    key: String,
    /// Round number, its report (without examples) and its seconds.
    done: Vec<(usize, VerifyReport, f64)>,
}

impl Checkpoint {
    fn open(path: &Path, table: &EndgameTables) -> Checkpoint {
        let key = format!(
            "fortress verify {} {:016x} {:016x} {:016x}",
            table.material(),
            table.header(Metric::Dtm).payload_hash,
            table.header(Metric::Dtz).payload_hash,
            table.header(Metric::Dtz50).payload_hash,
        );
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut lines = text.lines();
        let done = if lines.next() == Some(key.as_str()) {
            lines.map_while(Self::parse).collect()
        } else {
            Vec::new()
        };
        Checkpoint {
            path: path.to_path_buf(),
            key,
            done,
        }
    }

    /// `round N checked broken disagreements seconds`.
    fn parse(line: &str) -> Option<(usize, VerifyReport, f64)> {
        let f: Vec<&str> = line.split(' ').collect();
        let [tag, n, checked, broken, bad, seconds] = f[..] else {
            return None;
        };
        (tag == "round").then_some(())?;
        let report = VerifyReport {
            checked: checked.parse().ok()?,
            broken: broken.parse().ok()?,
            disagreements: bad.parse().ok()?,
            ..VerifyReport::default()
        };
        Some((n.parse().ok()?, report, seconds.parse().ok()?))
    }

    fn done(&self, round: usize) -> Option<(&VerifyReport, f64)> {
        self.done
            .iter()
            .find(|d| d.0 == round)
            .map(|(_, r, s)| (r, *s))
    }

    /// Records a round done (a disagreeing one too: its count stays in the report). The file
    /// is replaced whole (written aside, synced, renamed), so a kill leaves the old or the new.
    fn add(&mut self, round: usize, report: &VerifyReport, seconds: f64) -> io::Result<()> {
        self.done.push((
            round,
            VerifyReport {
                examples: Vec::new(),
                ..report.clone()
            },
            seconds,
        ));
        let mut text = format!("{}\n", self.key);
        for (n, r, s) in &self.done {
            let line = format!(
                "round {n} {} {} {} {s:.3}\n",
                r.checked, r.broken, r.disagreements
            );
            text.push_str(&line);
        }
        let aside = self.path.with_extension("verify.tmp");
        let mut f = std::fs::File::create(&aside)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&aside, &self.path)
    }

    /// The verification is over: its record goes.
    fn finish(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Entries of a half checked together, and the entries of the target half their in-table
/// successors lie in.
struct Round {
    target: Range<u64>,
    checked: Vec<Range<u64>>,
}

/// The rounds that check half `half`, whose moves lead into `target`. Pawnless: a move leaves
/// the king of the side not to move where it stands, and that king is the side to move's
/// after it, numbered in a1-d1-d4 (the square of its orbit under the board's symmetries); the
/// blocks of one such king are consecutive in the index. So one round per square of the
/// triangle: the positions whose sntm king's orbit it is, against about an eighth of the target
/// half (KQRKBN: under 3 GB packed instead of 22 GB). With pawns, one round: the whole half.
fn rounds(index: &EndgameIndex, half: Half, target: Half) -> Vec<Round> {
    let (checked, targets) = (index.king_blocks(half), index.king_blocks(target));
    if checked.is_empty() {
        return vec![Round {
            target: 0..index.size(target),
            checked: std::iter::once(0..index.size(half)).collect(),
        }];
    }
    let orbit = |s: Square| {
        let (mut f, mut r) = (s.file(), s.rank());
        if f >= 4 {
            f = 7 - f;
        }
        if r >= 4 {
            r = 7 - r;
        }
        if f < r {
            std::mem::swap(&mut f, &mut r);
        }
        Square::new(f, r)
    };
    let mut out: Vec<Round> = Vec::new();
    for &(ks, _, _) in &targets {
        if out.last().is_some_and(|r| r.target.start == ks.0 as u64) {
            continue;
        }
        // Keyed by the square until the ranges are filled in below.
        out.push(Round {
            target: ks.0 as u64..0,
            checked: Vec::new(),
        });
    }
    for round in &mut out {
        let t = Square(round.target.start as u8);
        let blocks = targets.iter().filter(|b| b.0 == t).map(|b| &b.2);
        let start = blocks.clone().map(|r| r.start).min().unwrap_or(0);
        let end = blocks.map(|r| r.end).max().unwrap_or(0);
        for (_, kn, r) in checked.iter().filter(|b| orbit(b.1) == t) {
            debug_assert_eq!(orbit(*kn), t);
            match round.checked.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => round.checked.push(r.clone()),
            }
        }
        round.target = start..end;
    }
    out
}

/// Entries of every stored half: the bar's length.
fn start_bar(table: &EndgameTables, bar: &ProgressBar) {
    let index = table.index();
    bar.set_length(index.stored_halves().iter().map(|&h| index.size(h)).sum());
    bar.set_position(0);
}

/// A range of one half of a table's values in plies codes, 32 bits an entry: DTM in the low
/// 11 bits, DTZ in the next 11, DTZ50 in the top 10 (KRBKNN's deepest DTM, 223 moves, is code
/// 895).
pub struct PackedHalf {
    half: Half,
    first: u64,
    cells: HugeArray<u32>,
}

/// Bits of the DTM, DTZ and DTZ50 codes in a packed cell.
const BITS: [u32; 3] = [11, 11, 10];

/// DTM, DTZ and DTZ50 plies codes in 32 bits, each at most its field's largest.
#[inline]
fn pack(codes: [u32; 3]) -> u32 {
    let mut shift = 0;
    let mut out = 0;
    for (c, bits) in codes.into_iter().zip(BITS) {
        out |= c.min((1 << bits) - 1) << shift;
        shift += bits;
    }
    out
}

/// The three codes of `pack`.
#[inline]
fn unpack(cell: u32) -> [u16; 3] {
    let mut shift = 0;
    BITS.map(|bits| {
        let c = cell >> shift & ((1 << bits) - 1);
        shift += bits;
        c as u16
    })
}

impl PackedHalf {
    /// Reads entries `range` of half `half` of `table` in order; None if a code does not fit
    /// its field.
    fn pack(
        table: &EndgameTables,
        half: Half,
        range: Range<u64>,
    ) -> Result<Option<PackedHalf>, OutOfMemory> {
        const CHUNK: usize = 1 << 16;
        let mut cells = HugeArray::zeroed((range.end - range.start) as usize)?;
        let fits = cells.par_chunks_mut(CHUNK).enumerate().all(|(c, chunk)| {
            chunk.iter_mut().enumerate().all(|(k, cell)| {
                let idx = range.start + (c * CHUNK + k) as u64;
                let codes = Derived::default().plies(table, half, idx);
                *cell = pack(codes.map(|c| c as u32));
                unpack(*cell) == codes
            })
        });
        Ok(fits.then_some(PackedHalf {
            half,
            first: range.start,
            cells,
        }))
    }

    /// The codes of entry `idx` of half `h`, if held.
    #[inline]
    fn get(&self, h: Half, idx: u64) -> Option<[u16; 3]> {
        if h != self.half {
            return None;
        }
        let c = *self.cells.get(idx.checked_sub(self.first)? as usize)?;
        Some(unpack(c))
    }
}

/// Checks the entries `range` of one half; in-table successors are read from `packed` where
/// it holds them.
fn verify_range(
    table: &EndgameTables,
    subs: &[EndgameTables],
    derived: &Derived,
    half: Half,
    range: Range<u64>,
    packed: Option<&PackedHalf>,
    bar: &ProgressBar,
) -> VerifyReport {
    const CHUNK: u64 = 1 << 13;
    let index = table.index();
    let checked = AtomicU64::new(0);
    let broken = AtomicU64::new(0);
    let bad = AtomicU64::new(0);
    let examples = Mutex::new(Vec::new());
    // Files that store broken entries as their neighbours leave nothing to check there.
    let marked = table.marks_broken();
    let (first, size) = (range.start, range.end);
    // The first few disagreements, for the report (only a disagreement builds a text).
    let note = |idx: u64, what: String| {
        let mut ex = examples.lock().expect("no panics while held");
        if ex.len() < 10 {
            ex.push(format!(
                "{} {} #{idx} {what}",
                table.material(),
                half.name()
            ));
        }
    };
    (first / CHUNK..size.div_ceil(CHUNK))
        .into_par_iter()
        .for_each(|c| {
            // One position per chunk, cleared for each entry: no allocation per entry.
            let mut pos = Position::startpos();
            let mut scratch = Scratch::default();
            let (mut n_checked, mut n_broken, mut n_bad) = (0, 0, 0);
            let chunk = (c * CHUNK).max(first)..((c + 1) * CHUNK).min(size);
            for idx in chunk.clone() {
                let Some(tb) = index.decode(half, idx) else {
                    n_broken += 1;
                    let stored = derived.plies(table, half, idx);
                    if marked && stored.iter().any(|&v| v != CODE_NONE) {
                        n_bad += 1;
                    }
                    continue;
                };
                n_checked += 1;
                let computed = minimax(table, subs, derived, packed, &mut pos, &tb, &mut scratch);
                if derived.half == Some(half) {
                    derived.set(idx, computed);
                }
                let values = derived.values(table, half, idx);
                let stored = derived.plies(table, half, idx);
                // The WDL file must give the result its entry's DTM and DTZ50 give.
                let [dtm, _, dtz50] = values.unwrap_or([TbValue::BROKEN; 3]);
                let result = table.result(half, idx);
                if result != Wdl5::of(dtm, dtz50) {
                    n_bad += 1;
                    let given = Wdl5::of(dtm, dtz50);
                    note(
                        idx,
                        format!("wdl: stored {result:?}, DTM and DTZ50 give {given:?}"),
                    );
                    continue;
                }
                // A verdict reads no DTZ50 where the bound of the entry's span leaves room for
                // it: no entry may lie deeper than its span says.
                if let Outcome::Win(n) | Outcome::Loss(n) = dtz50.outcome() {
                    let bound = table.dtz50_depth_bound(half, idx);
                    if bound.is_some_and(|b| b < n) {
                        n_bad += 1;
                        note(
                            idx,
                            format!("dtz50: {n} plies, deeper than its span's {bound:?}"),
                        );
                        continue;
                    }
                }
                for m in 0..3 {
                    if computed[m] != stored[m] {
                        n_bad += 1;
                        let [s, c] = [stored[m], computed[m]].map(TbValue::from_raw);
                        let name = Metric::ALL[m].name();
                        note(
                            idx,
                            format!("{name}: stored {s:?}, successors give {c:?} (plies codes)"),
                        );
                        break;
                    }
                }
            }
            checked.fetch_add(n_checked, Relaxed);
            broken.fetch_add(n_broken, Relaxed);
            bad.fetch_add(n_bad, Relaxed);
            bar.inc(chunk.end - chunk.start);
        });
    VerifyReport {
        checked: checked.into_inner(),
        broken: broken.into_inner(),
        disagreements: bad.into_inner(),
        examples: examples.into_inner().expect("no panics while held"),
        earlier_seconds: 0.0,
    }
}

/// Where a successor's values are: its table (0 this one, k the sub-table k - 1; `DRAWN` for
/// bare kings), half and index, and whether the move zeroes the counter.
type SuccessorEntry = (usize, Half, u64, bool);
const DRAWN: usize = usize::MAX;

/// Scratch space of one verifying thread, reused for every entry (no allocation per entry).
#[derive(Default)]
struct Scratch {
    entries: Vec<SuccessorEntry>,
    values: Vec<[u16; 3]>,
}

/// DTM, DTZ, DTZ50 in plies codes from the successors' stored values. All successors are
/// indexed first and their values read in one run after: the reads miss the cache, and issued
/// together they are fetched in parallel rather than one after another.
fn minimax(
    table: &EndgameTables,
    subs: &[EndgameTables],
    derived: &Derived,
    packed: Option<&PackedHalf>,
    pos: &mut Position,
    tb: &TbPosition,
    scratch: &mut Scratch,
) -> [u16; 3] {
    set_position(pos, tb);
    let moves = legal_moves(pos);
    if moves.is_empty() {
        let v = if pos.in_check() { loss(0) } else { CODE_DRAW };
        return [v; 3];
    }
    let own = table.material();
    let index = table.index();
    let Scratch { entries, values } = scratch;
    entries.clear();
    // The successors by moves of men other than the king share their kings: what the index
    // takes from the kings is worked out once, at the first of them.
    let king = pos.king_square(tb.stm);
    let mut frame = None;
    for m in moves.iter() {
        let (succ, effect) = successor(pos, tb, m);
        let (zeroing_move, converts) = (effect.zeroes(), effect == Effect::Converts);
        let (k, entry) = if !converts && m.from() != king && succ.ep.is_none() {
            let f = frame.get_or_insert_with(|| index.own_frame(&succ));
            (0, f.as_ref().and_then(|f| index.index_own_in(f, &succ)))
        } else if !converts {
            (0, index.index_own(&succ))
        } else if succ.material().men() == 2 {
            (DRAWN, Some((Half::Wtm, 0)))
        } else {
            let canon = succ.material().canonical().0;
            let k = if canon == own {
                0
            } else {
                match subs.iter().position(|t| t.material() == canon) {
                    Some(k) => k + 1,
                    None => return [CODE_NONE; 3], // reported as disagreement
                }
            };
            let t = if k == 0 { table } else { &subs[k - 1] };
            (k, t.entry(&succ))
        };
        let Some((h, i)) = entry else {
            return [CODE_NONE; 3];
        };
        entries.push((k, h, i, zeroing_move));
    }
    // The options each move gives the mover. A zeroing move's successor counts by its DTM and
    // its result alone (its DTZ and DTZ50 may not be stored for its side to move).
    values.clear();
    values.extend(entries.iter().map(|&(k, h, i, zeroes)| {
        let t = match k {
            DRAWN => return [CODE_DRAW; 3],
            0 => table,
            k => &subs[k - 1],
        };
        if zeroes {
            let Some(r) = t.result(h, i) else {
                return [CODE_NONE; 3];
            };
            let dtm = t.dtm_with(h, i, Some(r), subs).map_or(CODE_NONE, dtm_plies);
            return [
                backed(dtm),
                zeroing(wdl_of_result(r, false)),
                zeroing(wdl_of_result(r, true)),
            ];
        }
        let codes = match (k, packed.and_then(|p| p.get(h, i))) {
            (0, Some(codes)) => codes,
            (0, None) => derived.plies(table, h, i),
            _ => Derived::default().plies(t, h, i),
        };
        codes.map(backed)
    }));
    let mut best = [CODE_NONE; 3];
    for options in values.iter() {
        for k in 0..3 {
            if preference(options[k]) > preference(best[k]) {
                best[k] = options[k];
            }
        }
    }
    best[2] = capped_at_rule50(best[2]);
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egtb::Material;

    /// Every in-table successor of a round's checked entries lies in the round's packed range
    /// (else it is read through the block cache: right, but slow), and every entry is checked
    /// in exactly one round.
    #[test]
    fn rounds_hold_every_in_table_successor() {
        for name in ["KRKN", "KBBK", "KQKR"] {
            let m = Material::parse(name).unwrap().canonical().0;
            let index = EndgameIndex::new(&m);
            for &half in index.stored_halves() {
                let target = Half::of(!half.stm());
                let rounds = rounds(&index, half, target);
                assert_eq!(rounds.len(), 10, "{name}");
                let mut seen = vec![false; index.size(half) as usize];
                let mut pos = Position::startpos();
                for round in &rounds {
                    for range in &round.checked {
                        for idx in range.clone() {
                            assert!(!std::mem::replace(&mut seen[idx as usize], true));
                            // A sample: every entry's moves would take minutes.
                            if idx % 8 != 0 {
                                continue;
                            }
                            let Some(tb) = index.decode(half, idx) else {
                                continue;
                            };
                            set_position(&mut pos, &tb);
                            for mv in legal_moves(&pos).iter() {
                                let (succ, effect) = successor(&pos, &tb, mv);
                                if effect == Effect::Converts {
                                    continue;
                                }
                                let (h, i) = index.index_own(&succ).expect("legal successor");
                                assert_eq!(h, target);
                                assert!(round.target.contains(&i), "{name} {tb:?} {mv:?}");
                            }
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s), "{name}: an entry in no round");
            }
        }
    }
}
