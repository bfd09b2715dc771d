//! Probing in play: the registry of the tables found in the table path (`NalimovPath`), and the
//! probe of a position (2-5 men, no castling rights) that gives DTM, DTZ and DTZ50 and the
//! win/draw/loss with and without the 50-move rule (Nalimov, Haworth, Heinz 2001, Section 3 for
//! the index; Bourzutschky, Tamplin, Haworth 2005, Sections 2-4 for the metrics).
//!
//! Concurrency: the registry is an immutable snapshot (`Arc<Registry>`) replaced as a whole when
//! a table appears or disappears. Each search thread keeps its own `TbReader` holding a snapshot
//! and the generation it was taken at; a probe compares that generation with one atomic counter
//! and only on a change takes the read lock to fetch the new snapshot. The hot path takes no
//! lock and allocates nothing (a material lookup is a binary search in a sorted vector).
//!
//! Files are memory-mapped (`egtb::format`). A file unlinked while mapped stays readable on
//! Linux (the mapping keeps the inode), so a table deleted while the engine runs is harmless to
//! readers still holding it; `rescan` notices it is gone, says so, and drops it from the next
//! snapshot. A file truncated *in place* while mapped would fault on access: the engine's own
//! writers never do that (they write a new file and rename it), `rescan` compares each file's
//! identity (inode, size, mtime) with the one validated at open and drops any file that changed,
//! and a changed file is only reopened through the full validation (header and checksum).

use crate::chess::{Color, PieceType, Position};
use crate::egtb::format::{file_name, Metric, Outcome, TbValue, Wdl5};
use crate::egtb::index::{Half, TbPosition};
use crate::egtb::material::Material;
use crate::egtb::play::tables::one_ply::{zeroing_values, zeroing_within, Endgames};
use crate::egtb::play::tables::EndgameTables;
use crossbeam::channel::{unbounded, Receiver, Sender};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Win, draw or loss for the side to move.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Wdl {
    Loss,
    Draw,
    Win,
}

impl Wdl {
    pub fn name(self) -> &'static str {
        match self {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        }
    }
    pub fn of(v: TbValue) -> Wdl {
        match v.outcome() {
            Outcome::Win(_) => Wdl::Win,
            Outcome::Loss(_) => Wdl::Loss,
            _ => Wdl::Draw,
        }
    }
}

/// The three stored values of a position, for its side to move: DTM in winner's moves, DTZ and
/// DTZ50 in plies (a side already mated has a loss in 0 in all three).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct TbProbe {
    pub dtm: TbValue,
    pub dtz: TbValue,
    pub dtz50: TbValue,
}

/// Plies for the 50-move rule: a draw may be claimed once the counter reaches this.
pub const RULE50: u16 = 100;

impl TbProbe {
    pub const DRAW: TbProbe = TbProbe {
        dtm: TbValue::DRAW,
        dtz: TbValue::DRAW,
        dtz50: TbValue::DRAW,
    };

    /// The result without the 50-move rule.
    pub fn wdl(&self) -> Wdl {
        Wdl::of(self.dtm)
    }

    /// The result under the 50-move rule with `halfmove` plies already on the counter.
    ///
    /// DTZ50 = win in d means: from a fresh counter the winner forces, within d plies, a zeroing
    /// move (capture, pawn move, or mate) into a position that is again a 50-move win from a
    /// fresh counter, and no faster. With h plies on the counter the zeroing move (ply d) must
    /// come before a claim is possible, that is h + d - 1 < 100, i.e. d <= 100 - h. The loser
    /// cannot do better with fewer plies left than with more, so a win with d > 100 - h is a
    /// draw. Losses symmetrically. This is exact, not a bound.
    pub fn wdl50(&self, halfmove: u16) -> Wdl {
        let left = RULE50.saturating_sub(halfmove);
        match self.dtz50.outcome() {
            Outcome::Win(d) if d <= left => Wdl::Win,
            Outcome::Loss(d) if d <= left => Wdl::Loss,
            _ => Wdl::Draw,
        }
    }

    /// DTM in plies to mate (win in k moves = 2k - 1 plies; loss in k moves = 2k plies).
    pub fn dtm_plies(&self) -> Option<u16> {
        dtm_plies(self.dtm)
    }

    /// What the search takes from these values with `halfmove` plies on the counter; None
    /// for a win or loss without a DTM, which a sound table never holds.
    pub fn verdict(&self, halfmove: u16) -> Option<TableVerdict> {
        Some(match (self.wdl50(halfmove), self.wdl()) {
            (Wdl::Win, _) => TableVerdict::Win(Some(self.dtm_plies()?)),
            (Wdl::Loss, _) => TableVerdict::Loss(Some(self.dtm_plies()?)),
            (Wdl::Draw, Wdl::Win) => TableVerdict::CursedWin,
            (Wdl::Draw, Wdl::Loss) => TableVerdict::BlessedLoss,
            (Wdl::Draw, Wdl::Draw) => TableVerdict::Draw,
        })
    }
}

/// A DTM value in plies to mate.
fn dtm_plies(dtm: TbValue) -> Option<u16> {
    match dtm.outcome() {
        Outcome::Win(k) => Some(2 * k - 1),
        Outcome::Loss(k) => Some(2 * k),
        _ => None,
    }
}

/// A table position as the search scores it, for its side to move with the node's own counter:
/// a win or loss that the 50-move rule lets through, with its DTM in plies (None where the DTM
/// file leaves the side to move out), or a draw, told apart from the wins and losses the rule
/// spoils from that counter.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum TableVerdict {
    Win(Option<u16>),
    Loss(Option<u16>),
    CursedWin,
    BlessedLoss,
    Draw,
}

/// Depth of a win or loss value (None for a draw or broken).
pub fn depth(v: TbValue) -> Option<u16> {
    match v.outcome() {
        Outcome::Win(n) | Outcome::Loss(n) => Some(n),
        _ => None,
    }
}

/// Material of a position as a sorted-vector key: 3 bits per count, Pawn..Queen, white then
/// black.
#[inline]
fn key_of_counts(w: [u8; 5], b: [u8; 5]) -> u32 {
    let mut k = 0u32;
    for c in w.iter().chain(b.iter()) {
        k = (k << 3) | (*c as u32).min(7);
    }
    k
}

/// The registry's key of a material (colours as given).
pub fn material_key(m: &Material) -> u32 {
    let mut w = [0u8; 5];
    let mut b = [0u8; 5];
    for (i, kind) in PieceType::ALL[..5].iter().enumerate() {
        w[i] = m.count(Color::White, *kind);
        b[i] = m.count(Color::Black, *kind);
    }
    key_of_counts(w, b)
}

/// The material of a position (kings not counted) and its key.
#[inline]
pub fn position_material(pos: &Position) -> Material {
    let mut w = [0u8; 5];
    let mut b = [0u8; 5];
    for (i, kind) in PieceType::ALL[..5].iter().enumerate() {
        w[i] = pos.pieces(Color::White, *kind).count() as u8;
        b[i] = pos.pieces(Color::Black, *kind).count() as u8;
    }
    Material::from_counts(w, b)
}

/// The table-side view of a position.
#[inline]
pub fn tb_position(pos: &Position) -> TbPosition {
    let mut tb = TbPosition::empty(pos.side_to_move());
    for color in Color::BOTH {
        for kind in PieceType::ALL {
            tb.pieces[color.index()][kind.index()] = pos.pieces(color, kind);
        }
    }
    tb.ep = pos.ep_square();
    tb
}

/// Identity of a file as validated at open: changed identity means the file must be dropped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FileId {
    ino: u64,
    len: u64,
    mtime: i128,
}

fn file_id(path: &Path) -> Option<FileId> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let ino = 0;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    Some(FileId {
        ino,
        len: meta.len(),
        mtime,
    })
}

/// One endgame in the registry: its tables and where they came from.
struct Entry {
    key: u32,
    tables: Arc<EndgameTables>,
    dir: PathBuf,
    /// The identities of its files (`FILES`): the WDL file's is None while there is none.
    ids: [Option<FileId>; 4],
}

/// An endgame's files: the three distance files, which make a table, and the WDL file, used
/// where present.
const FILES: [Metric; 4] = [Metric::Dtm, Metric::Dtz, Metric::Dtz50, Metric::Wdl];

/// An immutable snapshot of the tables available.
#[derive(Default)]
pub struct Registry {
    /// Sorted by key; both colourings of an endgame are entered (same tables).
    entries: Vec<(u32, Arc<EndgameTables>)>,
    max_men: u8,
}

impl Registry {
    #[inline]
    fn find(&self, key: u32) -> Option<&EndgameTables> {
        self.entries
            .binary_search_by_key(&key, |e| e.0)
            .ok()
            .map(|i| &*self.entries[i].1)
    }

    pub fn max_men(&self) -> u8 {
        self.max_men
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Probes a position of this snapshot's tables; None if not covered. 2-man positions (bare
    /// kings) are draws without a table.
    #[inline]
    pub fn probe(&self, pos: &Position) -> Option<TbProbe> {
        let men = pos.men();
        if men as u8 > self.max_men.max(2) || pos.castling_rights() != 0 {
            return None;
        }
        if men == 2 {
            return Some(TbProbe::DRAW);
        }
        let m = position_material(pos);
        let t = self.find(material_key(&m))?;
        let tb = tb_position(pos);
        let (half, idx) = t.entry(&tb)?;
        // Read once for all three values where they hold depths alone.
        let result = t.result_for_depths(half, idx)?;
        let dtm = if t.dtm_missing() == Some(half) {
            t.dtm(half, idx, self)?
        } else {
            t.value_with(Metric::Dtm, half, idx, result)?
        };
        let [dtz, dtz50] = self.zeroing_pair(t, half, idx, result, pos, &tb)?;
        let p = TbProbe { dtm, dtz, dtz50 };
        (p.dtm != TbValue::BROKEN).then_some(p)
    }

    /// The verdict of a position of this snapshot's tables for the search
    /// (`TbProbe::verdict` with the position's counter), reading only what it needs: the
    /// result (one value of the WDL file), for a win or loss its DTZ50 if the counter is not
    /// fresh, and its DTM if the rule lets it through. None if not covered.
    #[inline]
    pub fn verdict(&self, pos: &Position) -> Option<TableVerdict> {
        let men = pos.men();
        if men as u8 > self.max_men.max(2) || pos.castling_rights() != 0 {
            return None;
        }
        if men == 2 {
            return Some(TableVerdict::Draw);
        }
        let t = self.find(material_key(&position_material(pos)))?;
        let tb = tb_position(pos);
        let (half, idx) = t.entry(&tb)?;
        let result = t.result(half, idx)?;
        let won = match result {
            Wdl5::Win => true,
            Wdl5::Loss => false,
            Wdl5::CursedWin => return Some(TableVerdict::CursedWin),
            Wdl5::BlessedLoss => return Some(TableVerdict::BlessedLoss),
            Wdl5::Draw => return Some(TableVerdict::Draw),
        };
        let h = pos.halfmove_clock();
        // As `TbProbe::wdl50`: the zeroing move must come before a claim. Most entries are
        // shallower than the plies left (the deepest DTZ50 of their span): nothing to read then.
        let left = RULE50.saturating_sub(h);
        if h > 0 && t.dtz50_depth_bound(half, idx).is_none_or(|d| d > left) {
            let kept = if t.zeroing_missing() == Some(half) {
                zeroing_within(pos, &tb, won, left, t, self)?
            } else {
                match t
                    .value_with(Metric::Dtz50, half, idx, Some(result))?
                    .outcome()
                {
                    Outcome::Win(d) | Outcome::Loss(d) => d <= left,
                    _ => false,
                }
            };
            if !kept {
                return Some(if won {
                    TableVerdict::CursedWin
                } else {
                    TableVerdict::BlessedLoss
                });
            }
        }
        // A side whose DTM is left out is a win or loss without its distance here: a ply of
        // moves at every such node would cost the search more than the mate's length gives.
        let plies = if t.dtm_missing() == Some(half) {
            None
        } else {
            Some(dtm_plies(t.value_with(
                Metric::Dtm,
                half,
                idx,
                Some(result),
            )?)?)
        };
        Some(if won {
            TableVerdict::Win(plies)
        } else {
            TableVerdict::Loss(plies)
        })
    }

    /// DTZ and DTZ50 of an entry of `t`, the position `pos` (`tb`): stored, or by one ply where
    /// the files leave its side to move out (`one_ply`). `result` as `value_with`'s.
    #[inline]
    fn zeroing_pair(
        &self,
        t: &EndgameTables,
        half: Half,
        idx: u64,
        result: Option<Wdl5>,
        pos: &Position,
        tb: &TbPosition,
    ) -> Option<[TbValue; 2]> {
        if t.zeroing_missing() == Some(half) {
            zeroing_values(pos, tb, t, self)
        } else {
            t.zeroing_pair_with(half, idx, result)
        }
    }

    /// Is the endgame of this material (either colouring) present?
    pub fn has(&self, m: &Material) -> bool {
        m.men() <= 2 || self.find(material_key(m)).is_some()
    }
}

/// The endgames that moves reach, for `one_ply`.
impl Endgames for Registry {
    fn endgame(&self, m: &Material) -> Option<&EndgameTables> {
        self.find(material_key(m))
    }
}

/// Where `info string` lines go: the UCI layer installs a sink; egtb does not know UCI.
pub type MessageSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The tables of the engine: the registry, its table path, and the background generator's
/// settings. Shared by the UCI session, the search threads and the background worker.
pub struct Tablebases {
    dirs: RwLock<Vec<PathBuf>>,
    /// The default table directory when the path was set: the one directory that may be created.
    own_dir: RwLock<PathBuf>,
    current: RwLock<Arc<Registry>>,
    /// Bumped after every replacement of `current`.
    generation: AtomicU64,
    /// The open endgames with their provenance (the writer side; readers never touch it).
    open: Mutex<Vec<Entry>>,
    sink: RwLock<Option<MessageSink>>,
    pub generate_missing: AtomicBool,
    pub generate_max_men: AtomicU8,
    /// Endgames the search met without a table, for whoever builds them: the background
    /// worker (`egtb::background`) that the session starts and owns.
    wanted: Wanted,
}

/// A queue of endgames without duplicates: an endgame queued stays listed until `built`.
struct Wanted {
    tx: Sender<Material>,
    rx: Receiver<Material>,
    queued: Mutex<HashSet<Material>>,
}

impl Default for Wanted {
    fn default() -> Self {
        let (tx, rx) = unbounded();
        Wanted {
            tx,
            rx,
            queued: Mutex::default(),
        }
    }
}

impl Default for Tablebases {
    fn default() -> Self {
        Tablebases {
            dirs: RwLock::new(Vec::new()),
            own_dir: RwLock::new(PathBuf::new()),
            current: RwLock::new(Arc::new(Registry::default())),
            generation: AtomicU64::new(1),
            open: Mutex::new(Vec::new()),
            sink: RwLock::new(None),
            generate_missing: AtomicBool::new(false),
            generate_max_men: AtomicU8::new(4),
            wanted: Wanted::default(),
        }
    }
}

/// Splits a `NalimovPath` value: directories separated by `;` (empty parts ignored).
pub fn split_path(value: &str) -> Vec<PathBuf> {
    value
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "<empty>")
        .map(PathBuf::from)
        .collect()
}

/// The default table directory (`choose_default_dir` for this executable and this user).
pub fn default_dir() -> PathBuf {
    let exe = std::env::current_exe().ok();
    choose_default_dir(exe.as_deref(), dirs::data_dir().as_deref())
}

/// The default table directory of the executable `exe` for a user whose per-user data directory
/// is `data_dir`: `tables/` in the executable's folder or up to two folders above it (a source
/// tree's `tables/` for `target/release/engine`) if there is one; otherwise `fortress/tables` in
/// the data directory (`~/.local/share` on Linux). Never the working directory: a GUI chooses that,
/// and tables generated there would be scattered over the user's folders.
pub fn choose_default_dir(exe: Option<&Path>, data_dir: Option<&Path>) -> PathBuf {
    let beside = exe.map(|e| e.ancestors().skip(1).take(3).map(|d| d.join("tables")));
    if let Some(found) = beside.into_iter().flatten().find(|t| t.is_dir()) {
        return found;
    }
    match (data_dir, exe.and_then(Path::parent)) {
        (Some(data), _) => data.join("fortress").join("tables"),
        // No known home: the executable's own folder rather than wherever the GUI runs us.
        (None, Some(exe_dir)) => exe_dir.join("tables"),
        (None, None) => std::env::temp_dir().join("fortress").join("tables"),
    }
}

impl Tablebases {
    pub fn new() -> Arc<Tablebases> {
        Arc::new(Tablebases::default())
    }

    pub fn set_sink(&self, sink: Option<MessageSink>) {
        *self.sink.write().expect("sink lock") = sink;
    }

    /// Sends one line to the installed sink (the UCI layer prints it as `info string`).
    pub fn say(&self, text: &str) {
        if let Some(s) = self.sink.read().expect("sink lock").as_ref() {
            s(text);
        }
    }

    /// The engine's own default table directory: the one directory of the path that may be
    /// created.
    pub fn own_dir(&self) -> PathBuf {
        self.own_dir.read().expect("dirs lock").clone()
    }

    /// The table path as set, less the directories that have gone since (other than the
    /// engine's own): the background generator writes into the first, and must not create it.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let own = self.own_dir.read().expect("dirs lock");
        let dirs = self.dirs.read().expect("dirs lock");
        dirs.iter()
            .filter(|d| d.is_dir() || **d == *own)
            .cloned()
            .collect()
    }

    /// Sets the table path and rescans it from scratch. An entry that is not an existing
    /// directory is reported and left out, so that nothing (the background generator writes into
    /// the first entry) ever creates it: a mistyped value must not become a directory. The
    /// engine's own default directory is the exception, kept before it exists and created when
    /// the first table is generated into it.
    pub fn set_path(&self, dirs: Vec<PathBuf>) {
        let own = default_dir();
        let dirs = dirs
            .into_iter()
            .filter(|d| {
                let why = match std::fs::metadata(d) {
                    Ok(meta) if meta.is_dir() => return true,
                    _ if *d == own => return true,
                    Ok(_) => "is not a directory",
                    Err(_) => "is not a directory (it does not exist)",
                };
                self.say(&format!(
                    "NalimovPath: {} {why}; not used and not created",
                    d.display()
                ));
                false
            })
            .collect();
        *self.own_dir.write().expect("dirs lock") = own;
        *self.dirs.write().expect("dirs lock") = dirs;
        self.open.lock().expect("open lock").clear();
        self.rescan();
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Registry> {
        Arc::clone(&self.current.read().expect("registry lock"))
    }

    /// A per-thread reader.
    pub fn reader(self: &Arc<Self>) -> TbReader {
        let gen = self.generation.load(Ordering::Acquire);
        TbReader {
            tb: Arc::clone(self),
            snap: self.snapshot(),
            gen,
        }
    }

    /// Checks the open tables (deleted or changed files are dropped, with a message) and opens
    /// the complete, valid endgames newly present in the path. Publishes a new snapshot if
    /// anything changed. Cheap: a `stat` per file; run at `isready`, `go` and by the worker.
    pub fn rescan(&self) {
        let dirs = self.dirs();
        let mut open = self.open.lock().expect("open lock");
        let mut changed = false;
        // Drop what disappeared or changed.
        open.retain(|e| {
            let m = e.tables.material();
            // A WDL file that appears changes the identity too: the endgame is opened again.
            let still = FILES
                .iter()
                .zip(e.ids.iter())
                .all(|(metric, id)| file_id(&e.dir.join(file_name(&m, *metric))) == *id);
            if !still {
                self.say(&format!(
                    "table {m} in {} was deleted or changed; no longer used",
                    e.dir.display()
                ));
                changed = true;
            }
            still
        });
        // Open new endgames: scan each directory for *.dtm.ftb.
        for dir in &dirs {
            let Ok(rd) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut names: Vec<String> = rd
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter_map(|n| n.strip_suffix(".dtm.ftb").map(str::to_string))
                .collect();
            names.sort();
            for name in names {
                let Ok(m) = Material::parse(&name) else {
                    continue;
                };
                let m = m.canonical().0;
                let key = material_key(&m);
                if open.iter().any(|e| e.key == key) {
                    continue;
                }
                let paths = FILES.map(|metric| dir.join(file_name(&m, metric)));
                if !paths[..3].iter().all(|p| p.exists()) {
                    continue; // incomplete set: not a table (yet)
                }
                let ids_before = paths.clone().map(|p| file_id(&p));
                match EndgameTables::open(dir, &m) {
                    Ok(t) => {
                        let ids_after = paths.clone().map(|p| file_id(&p));
                        let wdl_read = t.file(Metric::Wdl).is_some() == ids_after[3].is_some();
                        if ids_before != ids_after
                            || ids_after[..3].iter().any(Option::is_none)
                            || !wdl_read
                        {
                            continue; // changed while opening: next rescan
                        }
                        open.push(Entry {
                            key,
                            tables: Arc::new(t),
                            dir: dir.clone(),
                            ids: ids_after,
                        });
                        changed = true;
                    }
                    Err(e) => {
                        // Reported once per file identity.
                        let id = ids_before;
                        let mut bad = BAD.lock().expect("bad lock");
                        if !bad.iter().any(|(p, i)| p == &paths[0] && *i == id) {
                            bad.push((paths[0].clone(), id));
                            self.say(&format!("table {m} not used: {e}"));
                        }
                    }
                }
            }
        }
        if changed {
            let mut entries: Vec<(u32, Arc<EndgameTables>)> = Vec::new();
            let mut max_men = 0;
            for e in open.iter() {
                let m = e.tables.material();
                max_men = max_men.max(m.men());
                entries.push((e.key, Arc::clone(&e.tables)));
                let fk = material_key(&m.flipped());
                if fk != e.key {
                    entries.push((fk, Arc::clone(&e.tables)));
                }
            }
            entries.sort_by_key(|e| e.0);
            let reg = Arc::new(Registry { entries, max_men });
            *self.current.write().expect("registry lock") = reg;
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Lists the table of `m` as wanted (if generation is on and `m` is small enough). Cheap
    /// to call repeatedly: an endgame already listed is not listed twice.
    pub fn request(&self, m: &Material) {
        if !self.generate_missing.load(Ordering::Relaxed)
            || m.men() > self.generate_max_men.load(Ordering::Relaxed)
            || m.men() < 3
        {
            return;
        }
        let m = m.canonical().0;
        if self.wanted.queued.lock().expect("queue lock").insert(m) {
            let _ = self.wanted.tx.send(m);
        }
    }

    /// The endgames wanted, in the order they were asked for (`request`).
    pub fn wanted(&self) -> Receiver<Material> {
        self.wanted.rx.clone()
    }

    /// Takes `m` off the list of endgames wanted: built, or given up.
    pub fn built(&self, m: &Material) {
        self.wanted.queued.lock().expect("queue lock").remove(m);
    }
}

type BadList = Vec<(PathBuf, [Option<FileId>; 4])>;
static BAD: Mutex<BadList> = Mutex::new(Vec::new());

/// A search thread's view of the tables: lock-free on the hot path.
pub struct TbReader {
    tb: Arc<Tablebases>,
    snap: Arc<Registry>,
    gen: u64,
}

impl TbReader {
    /// Refreshes the snapshot if the registry changed (one atomic load otherwise).
    #[inline]
    fn refresh(&mut self) {
        let g = self.tb.generation.load(Ordering::Acquire);
        if g != self.gen {
            self.snap = self.tb.snapshot();
            self.gen = g;
        }
    }

    #[inline]
    pub fn probe(&mut self, pos: &Position) -> Option<TbProbe> {
        self.refresh();
        self.snap.probe(pos)
    }

    #[inline]
    pub fn verdict(&mut self, pos: &Position) -> Option<TableVerdict> {
        self.refresh();
        self.snap.verdict(pos)
    }

    pub fn registry(&mut self) -> &Registry {
        self.refresh();
        &self.snap
    }

    pub fn tablebases(&self) -> &Arc<Tablebases> {
        &self.tb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_dir_is_a_source_trees_or_the_users_never_the_working_directory() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("home/.local/share");
        // A source tree: `target/release/engine` finds the tree's `tables/` two levels up.
        let tree = root.path().join("src-tree");
        std::fs::create_dir_all(tree.join("tables")).unwrap();
        std::fs::create_dir_all(tree.join("target/release")).unwrap();
        let built = tree.join("target/release/engine");
        assert_eq!(
            choose_default_dir(Some(&built), Some(&data)),
            tree.join("tables")
        );
        // An installed engine with no `tables/` near it: the user's data directory.
        let bin = root.path().join("opt/fortress/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let installed = bin.join("engine");
        assert_eq!(
            choose_default_dir(Some(&installed), Some(&data)),
            data.join("fortress/tables")
        );
        // No known data directory: beside the executable.
        assert_eq!(
            choose_default_dir(Some(&installed), None),
            bin.join("tables")
        );
        assert!(choose_default_dir(None, None).is_absolute());
        // Choosing creates nothing.
        assert!(!data.exists() && !bin.join("tables").exists());
    }

    #[test]
    fn path_entries_that_are_not_directories_are_refused_and_never_created() {
        let root = tempfile::tempdir().unwrap();
        let tb = Tablebases::new();
        let said: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = Arc::clone(&said);
        tb.set_sink(Some(Arc::new(move |s: &str| {
            sink.lock().unwrap().push(s.to_string())
        })));
        let file = root.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let missing = root.path().join("abc");
        let good = root.path().join("tables");
        std::fs::create_dir(&good).unwrap();
        tb.set_path(vec![missing.clone(), file.clone(), good.clone()]);
        assert_eq!(tb.dirs(), vec![good.clone()]);
        let said = said.lock().unwrap().join("\n");
        assert!(
            said.contains("abc is not a directory (it does not exist)"),
            "{said}"
        );
        assert!(said.contains("a-file is not a directory;"), "{said}");
        assert!(!missing.exists());
        // A directory removed after it was set is no longer offered to the generator.
        std::fs::remove_dir(&good).unwrap();
        assert!(tb.dirs().is_empty());
    }
}
