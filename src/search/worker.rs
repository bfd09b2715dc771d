//! One search thread: the root loop with aspiration windows and MultiPV, the principal variation
//! search with its pruning and reductions, and quiescence. The main thread (id 0) also keeps the
//! clock and reports; helper threads of Lazy SMP search the same root and share only the table.

use super::knowledge::{Knowledge, Verdict, BLOCKAGE_SLOTS_LOG2};
use super::ordering::{
    is_quiet, pick, piece_to, score_moves, Hints, History, PieceTo, NO_PIECE_TO,
};
use super::see::see_ge;
use super::thread::{make_report, Report, Shared};
use super::tt::Bound;
use super::value::{
    is_mate_score, mate_in, mate_moves, mated_in, Value, DRAW, INFINITE, MAX_PLY, TB_WIN,
};
use crate::chess::movegen::MAX_MOVES;
use crate::chess::{generate, Gen, Move, MoveList, PieceType, Position};
use crate::eval::network::{Accumulator, Network};
use crate::recognize::{BlockageTable, Wanted};
use once_cell::sync::Lazy;
use std::sync::atomic::Ordering;

#[derive(Clone, Debug)]
pub(crate) struct RootMove {
    pub mv: Move,
    pub score: Value,
    pub previous_score: Value,
    pub pv: Vec<Move>,
    pub seldepth: usize,
}

impl RootMove {
    pub fn new(mv: Move) -> RootMove {
        RootMove {
            mv,
            score: -INFINITE,
            previous_score: -INFINITE,
            pv: vec![mv],
            seldepth: 0,
        }
    }
}

/// Late-move reductions by depth and move number: grow with the log of both.
static LMR: Lazy<[[i32; 64]; 64]> = Lazy::new(|| {
    let mut t = [[0; 64]; 64];
    for (d, row) in t.iter_mut().enumerate().skip(1) {
        for (m, r) in row.iter_mut().enumerate().skip(1) {
            *r = (0.75 + (d as f64).ln() * (m as f64).ln() / 2.25) as i32;
        }
    }
    t
});

/// Move list and ordering scores of one ply, kept across nodes so that no node clears 1.5 KB.
struct PlyMoves {
    list: MoveList,
    scores: [i32; MAX_MOVES],
}

type PvTable = [[Move; MAX_PLY + 1]; MAX_PLY + 1];

/// The memory of one search thread, allocated once (when `Threads` is set) and kept from one
/// search to the next, so that starting a search allocates nothing: its move lists, network
/// accumulators, history, PV table and pawn hash.
pub(crate) struct ThreadState {
    stack: Vec<PlyMoves>,
    accumulators: Vec<Accumulator>,
    history: History,
    pv: Box<PvTable>,
    blockage: BlockageTable,
}

impl ThreadState {
    pub fn new(network: &Network) -> ThreadState {
        ThreadState {
            stack: (0..MAX_PLY + 2)
                .map(|_| PlyMoves {
                    list: MoveList::new(),
                    scores: [0; MAX_MOVES],
                })
                .collect(),
            accumulators: Self::accumulators(network),
            history: History::new(),
            pv: Box::new([[Move::NONE; MAX_PLY + 1]; MAX_PLY + 1]),
            blockage: BlockageTable::new(BLOCKAGE_SLOTS_LOG2),
        }
    }

    fn accumulators(network: &Network) -> Vec<Accumulator> {
        (0..MAX_PLY + 2)
            .map(|_| Accumulator::new(network.hidden()))
            .collect()
    }
}

pub(crate) struct Worker<'a> {
    stack: &'a mut [PlyMoves],
    /// The network and its accumulator of each ply, updated as moves are made.
    network: &'a Network,
    accumulators: &'a mut [Accumulator],
    knowledge: Knowledge<'a>,
    shared: &'a Shared<'a>,
    pos: Position,
    id: usize,
    root_moves: Vec<RootMove>,
    unflushed: u64,
    seldepth: usize,
    stop: bool,
    history: &'a mut History,
    killers: [[Move; 2]; MAX_PLY + 2],
    /// The move each ply's singular search leaves out (`Move::NONE` outside one).
    excluded: [Move; MAX_PLY + 2],
    /// The piece and destination of the move that reached each ply (`ordering::piece_to`).
    reached_by: [PieceTo; MAX_PLY + 2],
    evals: [Value; MAX_PLY + 2],
    pv: &'a mut PvTable,
    pv_len: [usize; MAX_PLY + 1],
    root_depth: i32,
    /// The first move of the last line reported for the best root move.
    reported: Move,
}

impl<'a> Worker<'a> {
    /// A worker of thread `id` in `state`, which starts the search as a fresh one would: the
    /// history forgotten (the pawn hash, a cache of what pawns and kings alone decide, is kept).
    pub fn new(
        shared: &'a Shared<'a>,
        state: &'a mut ThreadState,
        pos: Position,
        root_moves: Vec<RootMove>,
        id: usize,
    ) -> Worker<'a> {
        let network: &Network = &shared.network;
        if state.accumulators[0].hidden() != network.hidden() {
            // `EvalFile` changed the network's size since this thread last searched.
            state.accumulators = ThreadState::accumulators(network);
        }
        let ThreadState {
            stack,
            accumulators,
            history,
            pv,
            blockage,
        } = state;
        history.clear();
        network.refresh(&pos, &mut accumulators[0]);
        Worker {
            network,
            accumulators,
            knowledge: Knowledge::new(
                shared.blockage_detection.then_some(blockage),
                shared.tables.as_ref().map(|t| t.reader()),
                shared.syzygy.clone(),
            ),
            stack,
            shared,
            pos,
            id,
            root_moves,
            unflushed: 0,
            seldepth: 0,
            stop: false,
            history,
            killers: [[Move::NONE; 2]; MAX_PLY + 2],
            excluded: [Move::NONE; MAX_PLY + 2],
            reached_by: [NO_PIECE_TO; MAX_PLY + 2],
            evals: [0; MAX_PLY + 2],
            pv,
            pv_len: [0; MAX_PLY + 1],
            root_depth: 0,
            reported: Move::NONE,
        }
    }

    pub fn flush_nodes(&mut self) {
        self.shared
            .nodes
            .fetch_add(self.unflushed, Ordering::Relaxed);
        self.unflushed = 0;
        if self.knowledge.tbhits > 0 {
            self.shared
                .tbhits
                .fetch_add(self.knowledge.tbhits, Ordering::Relaxed);
            self.knowledge.tbhits = 0;
        }
        let blockages = self.knowledge.take_blockages();
        if blockages > 0 {
            self.shared
                .blockages
                .fetch_add(blockages, Ordering::Relaxed);
        }
    }

    #[inline(always)]
    fn count_node(&mut self) {
        self.unflushed += 1;
        if self.unflushed >= 1024 {
            self.flush_nodes();
            // Every thread keeps the clock: with more threads than cores the main thread may
            // wait its turn for a long time, and the first to run past the limit stops them all.
            self.shared.check_limits(0);
            self.stop = self.shared.control.stopped();
        }
    }

    /// Makes move `m` at `ply`, bringing the next ply's accumulator up to date.
    #[inline]
    fn make_move(&mut self, m: Move, ply: usize) {
        let (parents, children) = self.accumulators.split_at_mut(ply + 1);
        self.network
            .update(&parents[ply], &mut children[0], &self.pos, m);
        self.reached_by[ply + 1] = piece_to(&self.pos, m);
        self.pos.make_move(m);
    }

    fn make_null(&mut self, ply: usize) {
        let (parents, children) = self.accumulators.split_at_mut(ply + 1);
        Network::copy(&parents[ply], &mut children[0]);
        self.reached_by[ply + 1] = NO_PIECE_TO;
        self.pos.make_null();
    }

    /// The static evaluation at `ply`, below every table win and mate score.
    #[inline]
    fn evaluate(&self, ply: usize) -> Value {
        const LIMIT: Value = TB_WIN - MAX_PLY as Value - 1;
        self.network
            .evaluate_accumulated(&self.accumulators[ply], &self.pos)
            .clamp(-LIMIT, LIMIT)
    }

    /// Iterative deepening. Returns the best move, its PV, its score and the last full depth.
    pub fn iterate(
        &mut self,
        max_depth: u32,
        multipv: usize,
        mate_limit: Option<u32>,
        report: &mut dyn FnMut(&Report),
    ) -> (Move, Vec<Move>, Value, u32) {
        let main = self.id == 0;
        let mut completed = 0u32;
        let mut best_changes = 0.0f64;
        let mut last_best = self.root_moves[0].mv;
        let mut last_score = 0;
        let mut stable_iterations = 0;
        // Helpers of Lazy SMP start one ply deeper on odd ids, to spread the threads over depths.
        let first = 1 + (self.id as u32 & 1);
        for depth in first..=max_depth.max(first) {
            if depth > max_depth && depth > 1 {
                break;
            }
            for rm in self.root_moves.iter_mut() {
                rm.previous_score = rm.score;
            }
            for pv_idx in 0..multipv {
                self.seldepth = 0;
                let prev = self.root_moves[pv_idx].previous_score;
                let mut delta = 18;
                let (mut alpha, mut beta) = if depth >= 4 && prev.abs() < 20_000 {
                    ((prev - delta).max(-INFINITE), (prev + delta).min(INFINITE))
                } else {
                    (-INFINITE, INFINITE)
                };
                loop {
                    let score = self.search_root(depth as i32, alpha, beta, pv_idx);
                    self.root_moves[pv_idx..].sort_by_key(|rm| std::cmp::Reverse(rm.score));
                    if self.stop {
                        break;
                    }
                    if score <= alpha {
                        beta = (alpha + beta) / 2;
                        alpha = (score - delta).max(-INFINITE);
                        if main && self.shared.control.elapsed().as_millis() > 2000 {
                            self.report_line(pv_idx, depth, Bound::Upper, report);
                        }
                    } else if score >= beta {
                        beta = (score + delta).min(INFINITE);
                        if main && self.shared.control.elapsed().as_millis() > 2000 {
                            self.report_line(pv_idx, depth, Bound::Lower, report);
                        }
                    } else {
                        break;
                    }
                    delta += delta / 2 + 5;
                }
                self.root_moves[..=pv_idx].sort_by_key(|rm| std::cmp::Reverse(rm.score));
                if self.stop {
                    break;
                }
            }
            if self.stop {
                break;
            }
            completed = depth;
            if main {
                self.flush_nodes();
                for i in 0..multipv {
                    self.report_line(i, depth, Bound::Exact, report);
                }
            }
            let best = self.root_moves[0].mv;
            let score = self.root_moves[0].score;
            if best != last_best {
                best_changes += 1.0;
                stable_iterations = 0;
            } else {
                stable_iterations += 1;
            }
            best_changes *= 0.5;
            if let Some(n) = mate_limit {
                if is_mate_score(score) && score > 0 && mate_moves(score) <= n as i32 {
                    break;
                }
            }
            if main {
                // `movetime` (a budget whose soft limit is its hard one) is spent in full.
                if let Some(b) = self.shared.budget.filter(|b| b.soft < b.hard) {
                    // More time when the best move keeps changing or the score drops; less when
                    // one move has stood out for several iterations.
                    let mut scale = 1.0 + best_changes;
                    if score < last_score - 30 {
                        scale *= 1.25;
                    }
                    if stable_iterations >= 4 {
                        scale *= 0.7;
                    }
                    let soft = b.soft.as_secs_f64() * scale;
                    let elapsed = self.shared.control.clock_elapsed().as_secs_f64();
                    if !self.shared.control.pondering() && elapsed >= soft.min(b.hard.as_secs_f64())
                    {
                        break;
                    }
                }
            }
            last_best = best;
            last_score = score;
        }
        // A move that took the lead in an iteration cut short is played: its line is reported
        // first, so that the last PV the GUI saw starts with the bestmove. Its score holds for
        // it at that depth, but other moves were not searched: a lower bound.
        let lead = &self.root_moves[0];
        if main && self.stop && lead.mv != self.reported && lead.score != -INFINITE {
            self.report_line(0, completed + 1, Bound::Lower, report);
        }
        let rm = &self.root_moves[0];
        let score = if rm.score == -INFINITE {
            rm.previous_score
        } else {
            rm.score
        };
        (rm.mv, rm.pv.clone(), score, completed)
    }

    fn report_line(&mut self, i: usize, depth: u32, bound: Bound, report: &mut dyn FnMut(&Report)) {
        self.flush_nodes();
        let rm = &self.root_moves[i];
        if rm.score == -INFINITE && depth > 1 && rm.previous_score == -INFINITE {
            return;
        }
        let r = make_report(
            self.shared,
            rm,
            depth,
            rm.seldepth as u32,
            i as u32 + 1,
            bound,
        );
        report(&r);
        if i == 0 {
            self.reported = rm.mv;
        }
    }

    fn search_root(&mut self, depth: i32, mut alpha: Value, beta: Value, pv_idx: usize) -> Value {
        self.root_depth = depth;
        let mut best = -INFINITE;
        for i in pv_idx..self.root_moves.len() {
            let m = self.root_moves[i].mv;
            self.make_move(m, 0);
            let new_depth = depth - 1 + self.pos.in_check() as i32;
            let mut score;
            if i == pv_idx {
                score = -self.search::<true>(-beta, -alpha, new_depth, 1);
            } else {
                score = -self.search::<false>(-alpha - 1, -alpha, new_depth, 1);
                if score > alpha && score < beta && !self.stop {
                    score = -self.search::<true>(-beta, -alpha, new_depth, 1);
                }
            }
            self.pos.unmake_move();
            if self.stop {
                break;
            }
            let rm = &mut self.root_moves[i];
            if i == pv_idx || score > alpha {
                rm.score = score;
                rm.seldepth = self.seldepth;
                rm.pv.clear();
                rm.pv.push(m);
                rm.pv.extend_from_slice(&self.pv[1][1..self.pv_len[1]]);
            } else {
                rm.score = -INFINITE;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        best
    }

    /// What the recognizers (and tables) know of this node: the bounds its value lies in, or
    /// `Err(value)` when that settles the node for the window. A known bound narrows the window
    /// (the paper's beta = DRAW) and the caller clamps the node's result to it, so that no
    /// fail-soft score can claim more than is known. The blockage detector is an interior-node
    /// recognizer: it is asked at the full-width nodes (`interior`), not at the quiescence
    /// horizon, where it would double its cost and a fence is met again one ply up. `depth` is
    /// the node's distance to the horizon (0 in the quiescence search), for Syzygy's probe depth.
    fn known_bounds(
        &mut self,
        alpha: Value,
        beta: Value,
        ply: usize,
        depth: i32,
        interior: bool,
    ) -> Result<(Value, Value), Value> {
        // A draw bound narrows the window only when the draw lies inside it (Figure 5).
        let wanted = Wanted {
            at_most_draw: interior && beta > DRAW,
            at_least_draw: interior && alpha < DRAW,
        };
        let (lo, hi) = match self.knowledge.probe(&self.pos, ply, depth, wanted) {
            Verdict::Exact(v) => return Err(v),
            Verdict::AtMost(v) => (-INFINITE, v),
            Verdict::AtLeast(v) => (v, INFINITE),
            Verdict::Unknown => (-INFINITE, INFINITE),
        };
        if alpha >= hi {
            return Err(hi);
        }
        if beta <= lo {
            return Err(lo);
        }
        Ok((lo, hi))
    }

    fn update_pv(&mut self, ply: usize, m: Move) {
        self.pv[ply][ply] = m;
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    fn has_non_pawn_material(&self) -> bool {
        let us = self.pos.side_to_move();
        (self.pos.color_bb(us)
            & !self.pos.kind_bb(PieceType::Pawn)
            & !self.pos.kind_bb(PieceType::King))
        .any()
    }

    fn search<const PV: bool>(
        &mut self,
        mut alpha: Value,
        mut beta: Value,
        depth: i32,
        ply: usize,
    ) -> Value {
        self.pv_len[ply] = ply;
        let in_check = self.pos.in_check();
        // Draws by rule, at the horizon too (the quiescence search does not look for them, and
        // its captures would otherwise score a repeated position and run the PV past the draw);
        // a repetition inside the game or the search counts as a draw.
        let draw = self.pos.repeats_within(usize::MAX)
            || (self.pos.halfmove_clock() >= 100 && (!in_check || has_legal_move(&self.pos)));
        if depth <= 0 && !draw {
            return self.qsearch::<PV>(alpha, beta, ply, true);
        }
        self.count_node();
        if self.stop {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if draw {
            return DRAW;
        }
        if ply >= MAX_PLY - 1 {
            return if in_check { DRAW } else { self.evaluate(ply) };
        }
        // Mate-distance pruning: no line from here can beat a shorter mate already found.
        alpha = alpha.max(mated_in(ply));
        beta = beta.min(mate_in(ply + 1));
        if alpha >= beta {
            return alpha;
        }
        let (lo, hi) = match self.known_bounds(alpha, beta, ply, depth, true) {
            Ok(bounds) => bounds,
            Err(v) => return v,
        };
        let v = self.search_node::<PV>(alpha.max(lo), beta.min(hi), depth, ply, in_check);
        v.clamp(lo, hi)
    }

    fn search_node<const PV: bool>(
        &mut self,
        mut alpha: Value,
        beta: Value,
        mut depth: i32,
        ply: usize,
        in_check: bool,
    ) -> Value {
        let key = self.pos.key();
        // A singular search re-searches this node without one move: the table's entry belongs
        // to the whole node, so it neither cuts nor is overwritten there.
        let excluded = self.excluded[ply];
        let singular_search = !excluded.is_none();
        let tt = if singular_search {
            None
        } else {
            self.shared.tt.probe(key, ply)
        };
        let tt_move = tt.map_or(Move::NONE, |e| e.mv);
        if let Some(e) = tt {
            if !PV
                && e.depth >= depth
                && match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => e.value >= beta,
                    Bound::Upper => e.value <= alpha,
                }
            {
                return e.value;
            }
        }

        let eval = if in_check {
            -INFINITE
        } else if singular_search {
            self.evals[ply]
        } else {
            tt.map_or_else(|| self.evaluate(ply), |e| e.eval)
        };
        self.evals[ply] = eval;
        let improving = !in_check && ply >= 2 && eval > self.evals[ply - 2];

        if !PV && !in_check && !singular_search {
            // Reverse futility: far above beta at low depth, a quiet move will not lose it all.
            if depth <= 6
                && eval - 85 * depth + 40 * improving as i32 >= beta
                && !is_mate_score(beta)
            {
                return eval;
            }
            // Null move, never without pieces: in pawn endings zugzwang is the rule.
            if depth >= 3
                && eval >= beta
                && self.has_non_pawn_material()
                && self.pos.last_move().is_some()
            {
                let r = 3 + depth / 4 + ((eval - beta) / 200).min(3);
                self.make_null(ply);
                let v = -self.search::<false>(-beta, -beta + 1, depth - r, ply + 1);
                self.pos.unmake_null();
                if self.stop {
                    return 0;
                }
                if v >= beta {
                    return if is_mate_score(v) { beta } else { v };
                }
            }
        }
        // Without a hash move at a deep node, search a little shallower (internal reduction).
        if depth >= 5 && tt_move.is_none() && !singular_search {
            depth -= 1;
        }

        // Singular extension: when every other move fails well below the table's lower bound
        // for the hash move, that move alone holds the position and is searched a ply deeper.
        // When even the others reach beta, several moves refute the parent (multi-cut).
        let mut singular = false;
        if let Some(e) = tt {
            if depth >= 7
                && !tt_move.is_none()
                && e.bound != Bound::Upper
                && e.depth >= depth - 3
                && !is_mate_score(e.value)
            {
                let s_beta = e.value - 2 * depth;
                self.excluded[ply] = tt_move;
                let v =
                    self.search_node::<false>(s_beta - 1, s_beta, (depth - 1) / 2, ply, in_check);
                self.excluded[ply] = Move::NONE;
                if self.stop {
                    return 0;
                }
                if v < s_beta {
                    singular = true;
                } else if !PV && s_beta >= beta {
                    return s_beta;
                }
            }
        }

        let counter = self.counter_move();
        let earlier = self.earlier_moves(ply);
        let buf = &mut self.stack[ply];
        buf.list.clear();
        generate(&self.pos, Gen::All, &mut buf.list);
        if buf.list.is_empty() {
            return if in_check { mated_in(ply) } else { DRAW };
        }
        let move_count = buf.list.len();
        score_moves(
            &self.pos,
            &buf.list,
            &mut buf.scores,
            &Hints {
                tt_move,
                killers: self.killers[ply],
                counter,
                earlier,
            },
            self.history,
        );

        let original_alpha = alpha;
        let mut best_score = -INFINITE;
        let mut best_move = Move::NONE;
        let mut quiets_tried = [Move::NONE; 64];
        let mut quiet_count = 0usize;
        let mut searched = 0usize;
        let side = self.pos.side_to_move().index();

        for i in 0..move_count {
            let (m, order_score) = {
                let buf = &mut self.stack[ply];
                pick(&mut buf.list, &mut buf.scores, i)
            };
            if m == excluded {
                continue;
            }
            let quiet = is_quiet(&self.pos, m);
            if best_score > -super::value::MATE_BOUND && !in_check {
                if quiet {
                    let lmp_limit = (3 + depth * depth) as usize / if improving { 1 } else { 2 };
                    if !PV && depth <= 6 && quiet_count >= lmp_limit {
                        continue;
                    }
                    if !PV && depth <= 4 && eval + 100 + 90 * depth <= alpha {
                        continue;
                    }
                } else if depth <= 6 && !see_ge(&self.pos, m, -70 * depth) {
                    continue;
                }
            }
            self.make_move(m, ply);
            let gives_check = self.pos.in_check();
            // Check and singular extensions, bounded so that perpetual checks cannot blow up
            // the tree.
            let extension = ((gives_check || (singular && m == tt_move))
                && (ply as i32) < 2 * self.root_depth) as i32;
            let new_depth = depth - 1 + extension;
            let mut score;
            if searched == 0 {
                score = -self.search::<PV>(-beta, -alpha, new_depth, ply + 1);
            } else {
                let mut r = 0;
                if depth >= 3 && searched > PV as usize && (quiet || order_score < 0) {
                    r = LMR[depth.min(63) as usize][searched.min(63)];
                    r += !PV as i32;
                    r -= improving as i32;
                    r -= gives_check as i32;
                    if quiet {
                        r -= self.history.butterfly[side][m.from().index()][m.to().index()] / 6000;
                    }
                    r = r.clamp(0, new_depth - 1);
                }
                score = -self.search::<false>(-alpha - 1, -alpha, new_depth - r, ply + 1);
                if score > alpha && r > 0 {
                    score = -self.search::<false>(-alpha - 1, -alpha, new_depth, ply + 1);
                }
                if PV && score > alpha && score < beta {
                    score = -self.search::<true>(-beta, -alpha, new_depth, ply + 1);
                }
            }
            self.pos.unmake_move();
            if self.stop {
                return 0;
            }
            searched += 1;
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = m;
                    if PV {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        if quiet {
                            self.reward_quiet(ply, m, depth, &quiets_tried[..quiet_count]);
                        }
                        break;
                    }
                    alpha = score;
                }
            }
            if quiet && quiet_count < quiets_tried.len() {
                quiets_tried[quiet_count] = m;
                quiet_count += 1;
            }
        }
        if searched == 0 {
            // Every move was pruned: only possible when a non-losing score was already known,
            // which cannot happen before the first move; keep a sound fail-low.
            return alpha;
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if PV && best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        if !singular_search {
            self.shared
                .tt
                .store(key, best_move, best_score, eval, depth, bound, ply);
        }
        best_score
    }

    fn counter_move(&self) -> Move {
        match (
            self.pos.last_move(),
            self.pos.last_move().and_then(|m| self.pos.piece_at(m.to())),
        ) {
            (Some(m), Some(p)) => self.history.counter[p.index()][m.to().index()],
            _ => Move::NONE,
        }
    }

    /// The pieces and destinations of the two moves before `ply`'s.
    fn earlier_moves(&self, ply: usize) -> [PieceTo; 2] {
        [
            self.reached_by[ply],
            ply.checked_sub(1)
                .map_or(NO_PIECE_TO, |p| self.reached_by[p]),
        ]
    }

    fn reward_quiet(&mut self, ply: usize, m: Move, depth: i32, tried: &[Move]) {
        let side = self.pos.side_to_move().index();
        let bonus = (depth * depth * 16).min(1600);
        let earlier = self.earlier_moves(ply);
        self.history.update(side, m, bonus);
        self.history
            .update_continuation(earlier, piece_to(&self.pos, m), bonus);
        for &q in tried {
            self.history.update(side, q, -bonus);
            self.history
                .update_continuation(earlier, piece_to(&self.pos, q), -bonus);
        }
        if self.killers[ply][0] != m {
            self.killers[ply][1] = self.killers[ply][0];
            self.killers[ply][0] = m;
        }
        if let Some(last) = self.pos.last_move() {
            if let Some(p) = self.pos.piece_at(last.to()) {
                self.history.counter[p.index()][last.to().index()] = m;
            }
        }
    }

    fn qsearch<const PV: bool>(
        &mut self,
        alpha: Value,
        beta: Value,
        ply: usize,
        horizon: bool,
    ) -> Value {
        self.count_node();
        if self.stop {
            return 0;
        }
        if PV {
            self.pv_len[ply] = ply;
        }
        self.seldepth = self.seldepth.max(ply);
        let in_check = self.pos.in_check();
        if ply >= MAX_PLY - 1 {
            return if in_check { DRAW } else { self.evaluate(ply) };
        }
        let after_capture = horizon && self.pos.last_captured().is_some();
        let (lo, hi) = match self.known_bounds(alpha, beta, ply, 0, after_capture) {
            Ok(bounds) => bounds,
            Err(v) => return v,
        };
        let v = self.qsearch_node::<PV>(alpha.max(lo), beta.min(hi), ply, in_check);
        v.clamp(lo, hi)
    }

    fn qsearch_node<const PV: bool>(
        &mut self,
        mut alpha: Value,
        beta: Value,
        ply: usize,
        in_check: bool,
    ) -> Value {
        let key = self.pos.key();
        let tt = self.shared.tt.probe(key, ply);
        if let Some(e) = tt {
            if !PV
                && match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => e.value >= beta,
                    Bound::Upper => e.value <= alpha,
                }
            {
                return e.value;
            }
        }
        let mut best_score = -INFINITE;
        let eval = if in_check {
            -INFINITE
        } else {
            let e = tt.map_or_else(|| self.evaluate(ply), |e| e.eval);
            if e >= beta {
                return e;
            }
            alpha = alpha.max(e);
            best_score = e;
            e
        };
        let earlier = self.earlier_moves(ply);
        let buf = &mut self.stack[ply];
        buf.list.clear();
        generate(
            &self.pos,
            if in_check { Gen::All } else { Gen::Captures },
            &mut buf.list,
        );
        if in_check && buf.list.is_empty() {
            return mated_in(ply);
        }
        let move_count = buf.list.len();
        let tt_move = tt.map_or(Move::NONE, |e| e.mv);
        score_moves(
            &self.pos,
            &buf.list,
            &mut buf.scores,
            &Hints {
                tt_move,
                killers: [Move::NONE; 2],
                counter: Move::NONE,
                earlier,
            },
            self.history,
        );
        let mut best_move = Move::NONE;
        for i in 0..move_count {
            let (m, _) = {
                let buf = &mut self.stack[ply];
                pick(&mut buf.list, &mut buf.scores, i)
            };
            if !in_check && !see_ge(&self.pos, m, 0) {
                continue;
            }
            self.make_move(m, ply);
            let score = -self.qsearch::<PV>(-beta, -alpha, ply + 1, false);
            self.pos.unmake_move();
            if self.stop {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = m;
                    if PV {
                        self.update_pv(ply, m);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else {
            Bound::Upper
        };
        self.shared.tt.store(
            key,
            best_move,
            best_score,
            if in_check { 0 } else { eval },
            0,
            bound,
            ply,
        );
        best_score
    }
}

fn has_legal_move(pos: &Position) -> bool {
    let mut list = MoveList::new();
    generate(pos, Gen::All, &mut list);
    !list.is_empty()
}
