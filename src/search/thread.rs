//! The engine's search driver: limits, Lazy SMP threads sharing the transposition table,
//! iterative deepening with aspiration windows and MultiPV at the root, and the reports the
//! UCI layer turns into `info` lines.

use super::knowledge::{syzygy_score, table_score, SyzygyUse};
use super::time::{budget, Budget, Clock};
use super::tt::{Bound, TranspositionTable};
use super::value::{is_mate_score, mate_moves, Value, INFINITE, MATE_BOUND, MAX_PLY};
use super::worker::{RootMove, ThreadState, Worker};
use crate::chess::{legal_moves, Color, Move, Position};
use crate::egtb::play::probe::{Registry, Tablebases, Wdl};
use crate::egtb::play::strategy::{self, analyse_root, MoveValues, RootAnalysis};
use crate::egtb::play::syzygy;
use crate::eval::network::Network;
use crate::memory::OutOfMemory;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What `go` asked for. Times are in milliseconds.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: u64,
    pub binc: u64,
    pub movestogo: Option<u32>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub mate: Option<u32>,
    pub movetime: Option<u64>,
    pub infinite: bool,
    pub ponder: bool,
    /// Restrict the root to these moves (empty: all).
    pub searchmoves: Vec<Move>,
}

/// One line of search output: a finished (or failed-high/low) principal variation.
#[derive(Clone, Debug)]
pub struct Report {
    pub depth: u32,
    pub seldepth: u32,
    pub multipv: u32,
    /// Centipawns, or mate in moves (negative: mated).
    pub score: Score,
    pub bound: Bound,
    pub nodes: u64,
    pub nps: u64,
    pub hashfull: u32,
    pub tbhits: u64,
    pub time_ms: u64,
    pub pv: Vec<Move>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Score {
    Cp(i32),
    Mate(i32),
}

impl Score {
    pub fn from_value(v: Value) -> Score {
        if is_mate_score(v) {
            Score::Mate(mate_moves(v))
        } else {
            Score::Cp(v)
        }
    }
}

#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `None` only when the side to move has no legal move (mate or stalemate).
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    pub score: Value,
    pub depth: u32,
    pub nodes: u64,
    /// Claims of the blockage detector during the search.
    pub blockages: u64,
}

/// Signals from the GUI to a running search.
pub struct Control {
    stop: AtomicBool,
    pondering: AtomicBool,
    /// Microseconds from the search start at which the clock started for us (the ponderhit).
    clock_start_us: AtomicU64,
    start: Instant,
}

impl Control {
    pub fn new(pondering: bool) -> Control {
        Control {
            stop: AtomicBool::new(false),
            pondering: AtomicBool::new(pondering),
            clock_start_us: AtomicU64::new(0),
            start: Instant::now(),
        }
    }
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }
    pub fn ponderhit(&self) {
        let us = self.start.elapsed().as_micros() as u64;
        self.clock_start_us.store(us, Ordering::SeqCst);
        self.pondering.store(false, Ordering::SeqCst);
    }
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    pub(crate) fn pondering(&self) -> bool {
        self.pondering.load(Ordering::SeqCst)
    }
    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
    /// Time spent since our clock started running (the ponderhit, or the start).
    pub(crate) fn clock_elapsed(&self) -> Duration {
        let from = Duration::from_micros(self.clock_start_us.load(Ordering::SeqCst));
        self.start.elapsed().saturating_sub(from)
    }
}

/// What all threads of one search share.
pub(crate) struct Shared<'a> {
    pub tt: &'a TranspositionTable,
    pub control: &'a Control,
    pub budget: Option<Budget>,
    pub node_limit: Option<u64>,
    pub nodes: AtomicU64,
    pub tbhits: AtomicU64,
    pub blockages: AtomicU64,
    pub threads: usize,
    pub blockage_detection: bool,
    pub network: Arc<Network>,
    pub tables: Option<Arc<Tablebases>>,
    pub syzygy: Option<SyzygyUse>,
    /// The score of the root's result when Syzygy judged the root: reported for the moves it
    /// kept unless the search finds a mate (the search itself sees a table win only after a
    /// zeroing move).
    pub root_tb_score: Option<Value>,
}

impl Shared<'_> {
    /// A root move's score as reported: the Syzygy result of the root where it judged the root,
    /// unless the search found a mate.
    pub fn root_score(&self, searched: Value) -> Value {
        match self.root_tb_score {
            Some(tb) if !is_mate_score(searched) => tb,
            _ => searched,
        }
    }

    /// Called by the main thread every few thousand nodes: stops on time or nodes.
    pub fn check_limits(&self, main_nodes_unflushed: u64) {
        if let Some(limit) = self.node_limit {
            if self.nodes.load(Ordering::Relaxed) + main_nodes_unflushed >= limit {
                self.control.stop();
            }
        }
        if let Some(b) = self.budget {
            if !self.control.pondering() && self.control.clock_elapsed() >= b.hard {
                self.control.stop();
            }
        }
    }
}

const HELPER_STACK_BYTES: usize = 8 << 20;

/// A bound on the memory of one search thread beside the shared table, for checking a `Threads`
/// value against the machine: its stack and about 2 MB of its own tables (pawn cache, blockage
/// hash, move stack, history, PV).
pub const THREAD_MEMORY_BYTES: u64 = HELPER_STACK_BYTES as u64 + (2 << 20);

/// The search threads, kept from one search to the next: Lazy SMP's helpers (a pool of
/// `threads - 1`, started when `Threads` is set) and the memory of every thread, the caller's
/// (id 0, the main thread) included, so that a search starts no thread and allocates nothing.
struct SearchThreads {
    helpers: Option<rayon::ThreadPool>,
    states: Vec<Mutex<ThreadState>>,
}

impl SearchThreads {
    fn new(threads: usize, network: &Network) -> Result<SearchThreads, String> {
        let helpers = if threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .stack_size(HELPER_STACK_BYTES)
                .thread_name(|i| format!("search helper {}", i + 1))
                .build()
                .map_err(|e| format!("{} helper threads cannot be started: {e}", threads - 1))?;
            Some(pool)
        } else {
            None
        };
        let states = (0..threads)
            .map(|_| Mutex::new(ThreadState::new(network)))
            .collect();
        Ok(SearchThreads { helpers, states })
    }

    fn count(&self) -> usize {
        self.states.len()
    }
}

pub struct Engine {
    tt: Arc<TranspositionTable>,
    threads: SearchThreads,
    pub multipv: usize,
    pub move_overhead_ms: u64,
    /// Whether pawn endings consult the blockage (fence) detector.
    pub blockage_detection: bool,
    /// The network that evaluates: the built-in one or `EvalFile`'s.
    pub network: Arc<Network>,
    /// The endgame tables (None: no probing).
    pub tables: Option<Arc<Tablebases>>,
    /// Syzygy tables, where Fortress's own do not reach (None: none).
    pub syzygy: Option<SyzygyUse>,
}

impl Engine {
    /// An engine with a table of `hash_mb`: for the engine's own small fixed sizes. A size chosen
    /// by a user goes through `set_hash`, which refuses what the machine cannot give.
    pub fn new(hash_mb: usize) -> Engine {
        let tt = TranspositionTable::new(hash_mb)
            .unwrap_or_else(|e| panic!("a {hash_mb} MB transposition table: {e}"));
        let network = Network::built_in();
        Engine {
            tt: Arc::new(tt),
            threads: SearchThreads::new(1, &network).expect("one thread needs no helper"),
            multipv: 1,
            move_overhead_ms: 10,
            blockage_detection: true,
            network,
            tables: None,
            syzygy: None,
        }
    }

    /// Replaces the table by one of `megabytes`; if the machine cannot give it, the old table
    /// stays and the error says why.
    pub fn set_hash(&mut self, megabytes: usize) -> Result<(), OutOfMemory> {
        self.tt = Arc::new(TranspositionTable::new(megabytes)?);
        Ok(())
    }

    /// Starts the pool of `threads - 1` helpers and every thread's memory; if the system cannot
    /// start them, the threads in use stay and the error says why.
    pub fn set_threads(&mut self, threads: usize) -> Result<(), String> {
        if threads.max(1) != self.threads.count() {
            self.threads = SearchThreads::new(threads.max(1), &self.network)?;
        }
        Ok(())
    }

    pub fn threads(&self) -> usize {
        self.threads.count()
    }

    pub fn hash_megabytes(&self) -> usize {
        self.tt.megabytes()
    }

    pub fn clear_hash(&self) {
        self.tt.clear();
    }

    /// Searches `pos` (whose undo stack holds the game's moves since the last zeroing move, for
    /// repetitions) under `limits`, calling `report` for each completed line.
    pub fn search(
        &self,
        pos: &Position,
        limits: &Limits,
        control: &Control,
        report: &mut dyn FnMut(&Report),
    ) -> SearchResult {
        self.tt.new_search();
        let us = pos.side_to_move();
        let clock = Clock {
            time: if us == Color::White {
                limits.wtime
            } else {
                limits.btime
            },
            increment: if us == Color::White {
                limits.winc
            } else {
                limits.binc
            },
            moves_to_go: limits.movestogo,
            move_time: limits.movetime,
        };
        let time_budget = if limits.infinite {
            None
        } else {
            budget(&clock, self.move_overhead_ms)
        };
        let mut shared = Shared {
            tt: &self.tt,
            control,
            budget: time_budget,
            node_limit: limits.nodes,
            nodes: AtomicU64::new(0),
            tbhits: AtomicU64::new(0),
            blockages: AtomicU64::new(0),
            threads: self.threads.count(),
            blockage_detection: self.blockage_detection,
            network: self.network.clone(),
            tables: self.tables.clone(),
            syzygy: self.syzygy.clone(),
            root_tb_score: None,
        };

        let mut root_moves: Vec<RootMove> = legal_moves(pos)
            .iter()
            .filter(|m| limits.searchmoves.is_empty() || limits.searchmoves.contains(m))
            .map(RootMove::new)
            .collect();
        if root_moves.is_empty() {
            // `searchmoves` named no legal move: fall back to every legal move.
            root_moves = legal_moves(pos).iter().map(RootMove::new).collect();
        }
        if root_moves.is_empty() {
            self.wait_while_infinite(limits, control);
            let score = if pos.in_check() {
                -super::value::MATE
            } else {
                0
            };
            return SearchResult {
                best: None,
                ponder: None,
                score,
                depth: 0,
                nodes: 0,
                blockages: 0,
            };
        }

        // A root in the tables is answered by the root strategy (SZ°Z50⁻Z⁻), without search.
        if limits.searchmoves.is_empty() && limits.mate.is_none() {
            if let Some(r) = self.table_root(pos, limits, control, report) {
                return r;
            }
        }

        // A root in Syzygy's tables: search only the moves that keep its result.
        if limits.searchmoves.is_empty() && limits.mate.is_none() {
            if let Some((keep, score, probes)) = self.syzygy_root(pos) {
                root_moves.retain(|rm| keep.contains(&rm.mv));
                shared.root_tb_score = Some(score);
                shared.tbhits.fetch_add(probes, Ordering::Relaxed);
            }
        }

        let max_depth = limits
            .depth
            .unwrap_or(MAX_PLY as u32 - 1)
            .clamp(1, MAX_PLY as u32 - 1);
        let multipv = self.multipv.clamp(1, root_moves.len());
        let mut search = || {
            let mut state = lock(&self.threads.states[0]);
            let mut main = Worker::new(&shared, &mut state, pos.clone(), root_moves.clone(), 0);
            let result = main.iterate(max_depth, multipv, limits.mate, report);
            // Pondering or infinite: the answer waits for the GUI's word.
            self.wait_while_infinite(limits, control);
            control.stop();
            main.flush_nodes();
            result
        };
        let main_result = match &self.threads.helpers {
            None => search(),
            // The helpers run on the pool; the scope ends when the last of them has stopped.
            Some(pool) => pool.in_place_scope(|scope| {
                for id in 1..shared.threads {
                    let (shared, states) = (&shared, &self.threads.states);
                    let (pos, root_moves) = (pos.clone(), root_moves.clone());
                    scope.spawn(move |_| {
                        let mut state = lock(&states[id]);
                        let mut w = Worker::new(shared, &mut state, pos, root_moves, id);
                        w.iterate(max_depth, 1, None, &mut |_| {});
                        w.flush_nodes();
                    });
                }
                search()
            }),
        };
        let (best, pv, score, depth) = main_result;
        let score = shared.root_score(score);
        let ponder = pv
            .get(1)
            .copied()
            .or_else(|| self.ponder_from_tt(pos, best));
        SearchResult {
            best: Some(best),
            ponder,
            score,
            depth,
            nodes: shared.nodes.load(Ordering::Relaxed),
            blockages: shared.blockages.load(Ordering::Relaxed),
        }
    }

    /// The root move by the tables (`egtb::play::strategy`), if the root and every position one move
    /// away are in them. The answer is exact, so no search runs, but the GUI is answered as
    /// after one: MultiPV k reports the first k moves in the strategy's order (`strategy::rank`)
    /// with their table scores (mate from DTM when the move wins or loses under the 50-move
    /// rule with the game's counter, else a draw score), each with the strategy's reply as
    /// the second move of its PV; depth is the one `go depth` asked for (the values hold at any
    /// depth), else the root's DTM in plies; `go infinite` and `go ponder` still wait for
    /// `stop` or `ponderhit` before the bestmove.
    fn table_root(
        &self,
        pos: &Position,
        limits: &Limits,
        control: &Control,
        report: &mut dyn FnMut(&Report),
    ) -> Option<SearchResult> {
        let tb = self.tables.as_ref()?;
        let reg = tb.snapshot();
        let (a, order) = table_ranking(&reg, pos, self.multipv > 1)?;
        let h = pos.halfmove_clock();
        let lines = self.multipv.clamp(1, order.len());
        let scores = order[..lines]
            .iter()
            .map(|&i| table_score(&a.moves[i].1.v, h, 0))
            .collect::<Option<Vec<Value>>>()?;
        let mut probes = a.probes;
        let mut pvs = Vec::with_capacity(lines);
        for &i in &order[..lines] {
            let m = a.moves[i].0;
            let mut child = pos.clone();
            child.make_move(m);
            // A line ends at a draw by rule, as the search's lines do: no reply after it.
            let drawn = child.repeats_within(usize::MAX) || child.halfmove_clock() >= 100;
            let reply = if drawn {
                None
            } else {
                table_ranking(&reg, &child, false)
            }
            .and_then(|(r, o)| {
                probes += r.probes;
                o.first().map(|&j| r.moves[j].0)
            });
            pvs.push(std::iter::once(m).chain(reply).collect::<Vec<Move>>());
        }
        let plies = a.root.dtm_plies().unwrap_or(1).max(1) as u32;
        let depth = limits
            .depth
            .map_or(plies, |d| d.clamp(1, MAX_PLY as u32 - 1));
        let time_ms = control.elapsed().as_millis() as u64;
        for (k, (pv, &score)) in pvs.iter().zip(&scores).enumerate() {
            report(&Report {
                depth,
                seldepth: depth.max(plies),
                multipv: k as u32 + 1,
                score: Score::from_value(score),
                bound: Bound::Exact,
                nodes: probes,
                nps: 0,
                hashfull: self.tt.hashfull(),
                tbhits: probes,
                time_ms,
                pv: pv.clone(),
            });
        }
        self.wait_while_infinite(limits, control);
        Some(SearchResult {
            best: Some(pvs[0][0]),
            ponder: pvs[0].get(1).copied(),
            score: scores[0],
            depth,
            nodes: probes,
            blockages: 0,
        })
    }

    /// The root moves that keep the root's result by Syzygy's DTZ with the game's counter, the
    /// score of that result, and the probes made; None when Syzygy does not cover the root.
    fn syzygy_root(&self, pos: &Position) -> Option<(Vec<Move>, Value, u64)> {
        let s = self.syzygy.as_ref()?;
        if pos.men() > s.men() {
            return None;
        }
        let values = s.tables.root(pos)?;
        let (result, keep) =
            syzygy::root_moves(&values, pos.halfmove_clock(), s.rule50, pos.has_repeated());
        // A kept move reaches a position one ply away whose result the search scores as it
        // scores a table probe there.
        Some((keep, syzygy_score(result, 1), values.len() as u64 + 1))
    }

    fn wait_while_infinite(&self, limits: &Limits, control: &Control) {
        while (limits.infinite || control.pondering()) && !control.stopped() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A reply to expect after `best`, from the table, when the PV is too short to give one.
    fn ponder_from_tt(&self, pos: &Position, best: Move) -> Option<Move> {
        let mut p = pos.clone();
        p.make_move(best);
        let e = self.tt.probe(p.key(), 0)?;
        legal_moves(&p).iter().find(|&m| m == e.mv)
    }
}

/// A thread's memory: a thread that panicked in an earlier search left it as valid as any other.
fn lock(state: &Mutex<ThreadState>) -> std::sync::MutexGuard<'_, ThreadState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The table values of `pos` and of its moves, with the moves in the strategy's order, if `pos`
/// and every position one move away are in the tables. The opponent's losing replies are
/// counted when the drawn-position rule needs them, and for any root if `all_errors` (MultiPV
/// ranks the drawing moves of a won or lost root by them too).
fn table_ranking(
    reg: &Registry,
    pos: &Position,
    all_errors: bool,
) -> Option<(RootAnalysis, Vec<usize>)> {
    let h = pos.halfmove_clock();
    let drawn = reg.probe(pos)?.wdl50(h) == Wdl::Draw;
    let a = analyse_root(reg, pos, all_errors || drawn)?;
    let values: Vec<MoveValues> = a.moves.iter().map(|m| m.1).collect();
    let order = strategy::rank(h, &values);
    Some((a, order))
}

/// Builds the report of one PV line.
pub(crate) fn make_report(
    shared: &Shared,
    rm: &RootMove,
    depth: u32,
    seldepth: u32,
    multipv: u32,
    bound: Bound,
) -> Report {
    let elapsed = shared.control.elapsed();
    let nodes = shared.nodes.load(Ordering::Relaxed);
    let ms = elapsed.as_millis() as u64;
    let value = shared.root_score(if rm.score == -INFINITE {
        rm.previous_score
    } else {
        rm.score
    });
    Report {
        depth,
        seldepth,
        multipv,
        score: Score::from_value(value.clamp(-MATE_BOUND * 2, MATE_BOUND * 2)),
        bound,
        nodes,
        nps: (nodes as f64 / elapsed.as_secs_f64().max(1e-3)) as u64,
        hashfull: shared.tt.hashfull(),
        tbhits: shared.tbhits.load(Ordering::Relaxed),
        time_ms: ms,
        pv: rm.pv.clone(),
    }
}
