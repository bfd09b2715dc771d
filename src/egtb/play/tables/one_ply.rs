//! What an endgame's files leave out for one side to move, by one ply, as Syzygy's tables
//! answer the side their DTZ file leaves out: DTZ and DTZ50 from the stored half's values for
//! the moves that stay in the endgame and the results (the WDL files, two-sided) of the
//! positions zeroing moves reach, which stop the count; DTM from the DTM of every position the
//! moves reach, worked out again by one ply where that is left out too. The values are exactly
//! those a two-sided file would hold (`plies`: the generator's and the verifier's own
//! arithmetic).

use crate::chess::{legal_moves, Color, Move, MoveKind, Piece, PieceType, Position, Square};
use crate::egtb::format::plies::{
    backed, capped_at_rule50, loss, preference, wdl_of_result, zeroing, CODE_DRAW, CODE_NONE,
};
use crate::egtb::format::{Metric, Outcome, TbValue, Wdl5};
use crate::egtb::index::{FrameCache, Half, OwnFrame, TbPosition};
use crate::egtb::material::Material;
use crate::egtb::play::tables::EndgameTables;
use std::cell::RefCell;

/// The tables of the endgames that moves reach.
pub trait Endgames {
    /// The tables of `m` (canonical colouring), None where they are not at hand.
    fn endgame(&self, m: &Material) -> Option<&EndgameTables>;
}

/// Tables in any order.
impl Endgames for [EndgameTables] {
    fn endgame(&self, m: &Material) -> Option<&EndgameTables> {
        self.iter().find(|t| t.material() == *m)
    }
}

/// Where the successors of one position of `own` lie: in `own` for the moves that keep the
/// material, the kings' share of their index worked out once for those that keep the kings too
/// (`EndgameIndex::own_frame`: most moves), else in an endgame of `all`.
struct Successors<'a, E: ?Sized> {
    own: &'a EndgameTables,
    all: &'a E,
    /// The mover's king, where the position is in `own`'s own colours (what a frame needs).
    king: Option<Square>,
    frame: Option<Option<OwnFrame>>,
}

impl<'a, E: Endgames + ?Sized> Successors<'a, E> {
    fn of(pos: &Position, tb: &TbPosition, own: &'a EndgameTables, all: &'a E) -> Self {
        Successors {
            own,
            all,
            king: (tb.material() == own.material()).then(|| pos.king_square(tb.stm)),
            frame: None,
        }
    }

    /// The table and entry of `succ`, reached by `m`, which does `effect`; Some(None) for bare
    /// kings, None where the table is not at hand.
    #[inline]
    fn locate(
        &mut self,
        m: Move,
        effect: Effect,
        succ: &TbPosition,
    ) -> Option<Option<(&'a EndgameTables, Half, u64)>> {
        let own = self.own;
        if effect != Effect::Converts {
            let (h, i) = if self.king.is_some_and(|k| k != m.from()) && succ.ep.is_none() {
                let index = own.index();
                let frame = self.frame.get_or_insert_with(|| index.own_frame(succ));
                index.index_own_in(frame.as_ref()?, succ)?
            } else {
                own.entry(succ)?
            };
            return Some(Some((own, h, i)));
        }
        let m = succ.material();
        if m.men() == 2 {
            return Some(None);
        }
        let m = m.canonical().0;
        let t = if m == own.material() {
            own
        } else {
            self.all.endgame(&m)?
        };
        let (h, i) = t.entry(succ)?;
        Some(Some((t, h, i)))
    }
}

/// DTZ and DTZ50 of `pos`, a position of `own` (its men those of `tb`), from its moves: `own`'s
/// other half for the moves that stay, `own`'s results for its pawn moves, `others` for
/// captures and promotions. None if a value needed is not at hand.
pub fn zeroing_values(
    pos: &Position,
    tb: &TbPosition,
    own: &EndgameTables,
    others: &(impl Endgames + ?Sized),
) -> Option<[TbValue; 2]> {
    let moves = legal_moves(pos);
    if moves.is_empty() {
        let v = if pos.in_check() { loss(0) } else { CODE_DRAW };
        return Some([TbValue::from_raw(v); 2]);
    }
    let mut best = [CODE_NONE; 2];
    let mut reach = Successors::of(pos, tb, own, others);
    for m in moves.iter() {
        let (succ, effect) = successor(pos, tb, m);
        let reached = reach.locate(m, effect, &succ)?;
        let options = if effect.zeroes() {
            let r = match reached {
                None => Wdl5::Draw,
                Some((t, h, i)) => t.result(h, i)?,
            };
            [false, true].map(|rule| zeroing(wdl_of_result(r, rule)))
        } else {
            let (_, h, i) = reached?;
            own.zeroing_pair(h, i)?.map(|v| backed(v.raw()))
        };
        for k in 0..2 {
            if preference(options[k]) > preference(best[k]) {
                best[k] = options[k];
            }
        }
    }
    best[1] = capped_at_rule50(best[1]);
    Some(best.map(TbValue::from_raw))
}

/// Is the DTZ50 of `pos` (a position of `own`, its men those of `tb`, that its side to move
/// wins under the 50-move rule if `won`, else loses) at most `limit` plies, that is, does the
/// rule let the result through with `100 - limit` plies on the counter (`TbProbe::wdl50`)?
/// By one ply as `zeroing_values`, but stopping at the first move that settles it: a win
/// needs one move to a loss within `limit - 1` plies (a zeroing move to a loss: none), a loss
/// fails at the first move to a win beyond that. None if a value needed is not at hand, or the
/// values disagree with the result.
pub fn zeroing_within(
    pos: &Position,
    tb: &TbPosition,
    won: bool,
    limit: u16,
    own: &EndgameTables,
    others: &(impl Endgames + ?Sized),
) -> Option<bool> {
    let moves = legal_moves(pos);
    if moves.is_empty() {
        return (!won && pos.in_check()).then_some(true);
    }
    let Some(room) = limit.checked_sub(1) else {
        return Some(false);
    };
    let goal = if won { Wdl5::Loss } else { Wdl5::Win };
    let mut reach = Successors::of(pos, tb, own, others);
    for m in moves.iter() {
        let (succ, effect) = successor(pos, tb, m);
        let reached = match reach.locate(m, effect, &succ)? {
            Some((t, h, i)) => Some((t, h, i, t.result(h, i)?)),
            None => None, // bare kings: a draw
        };
        let Some((t, h, i, r)) = reached.filter(|x| x.3 == goal) else {
            if won {
                continue;
            }
            return None;
        };
        // A zeroing move stops the count; a move that stays goes on with its position's count.
        let fits = effect.zeroes()
            || t.dtz50_depth_bound(h, i).is_some_and(|d| d <= room)
            || match t.value_with(Metric::Dtz50, h, i, Some(r))?.outcome() {
                Outcome::Win(n) | Outcome::Loss(n) => n <= room,
                _ => false,
            };
        if fits == won {
            return Some(won);
        }
    }
    Some(!won)
}

/// DTM of `tb`, a position of `own` whose result is `result`, from its moves: the DTM of
/// every position they reach (stored, or by one ply again where its file leaves it out, as
/// `EndgameTables::dtm`), `all` holding the endgames that captures and promotions reach. A win
/// in n moves has a move to a loss in n - 1 and none to a shorter one; a loss in n has every
/// move to a win, the longest in n. None if a value needed is not at hand, or the values
/// disagree with the result.
pub fn dtm_value(
    tb: &TbPosition,
    result: Wdl5,
    own: &EndgameTables,
    all: &(impl Endgames + ?Sized),
) -> Option<TbValue> {
    let won = match result.without_rule() {
        Wdl5::Win => true,
        Wdl5::Loss => false,
        _ => return Some(TbValue::DRAW),
    };
    with_scratch(|pos| {
        set_position(pos, tb);
        let mut reach = Successors::of(pos, tb, own, all);
        dtm_by_moves(pos, won, all, |m| {
            let (succ, effect) = successor(pos, tb, m);
            reach.locate(m, effect, &succ)
        })
    })
}

/// DTM of `pos`, a win if `won`, else a loss, from its moves: `locate(move)` gives the
/// table and entry each reaches as `Successors::locate` does.
fn dtm_by_moves<'a, E: Endgames + ?Sized>(
    pos: &Position,
    won: bool,
    all: &E,
    mut locate: impl FnMut(Move) -> Option<Option<(&'a EndgameTables, Half, u64)>>,
) -> Option<TbValue> {
    let moves = legal_moves(pos);
    if moves.is_empty() {
        return (!won && pos.in_check()).then(|| TbValue::loss(0)).flatten();
    }
    // The shortest loss a move reaches (a win), or the longest win (a loss).
    let mut best: Option<u16> = None;
    for m in moves.iter() {
        let Some((t, h, i)) = locate(m)? else {
            if won {
                continue; // bare kings: a draw
            }
            return None;
        };
        let result = t.result(h, i)?;
        match (won, result.without_rule()) {
            (true, Wdl5::Loss) => {
                let Outcome::Loss(k) = t.dtm_with(h, i, Some(result), all)?.outcome() else {
                    return None;
                };
                best = Some(best.map_or(k, |b| b.min(k)));
            }
            (true, _) => {}
            (false, Wdl5::Win) => {
                let Outcome::Win(k) = t.dtm_with(h, i, Some(result), all)?.outcome() else {
                    return None;
                };
                best = Some(best.map_or(k, |b| b.max(k)));
            }
            (false, _) => return None,
        }
    }
    let k = best?;
    if won {
        TbValue::win(k + 1)
    } else {
        TbValue::loss(k)
    }
}

/// Where the successors that keep the material lie for a run of positions (`dtm_run`), kept
/// by a thread from run to run so that a run allocates nothing.
#[derive(Default)]
pub struct RunScratch {
    frames: FrameCache,
    /// The entries reached by the run's man's own moves, by his square after the move.
    by_man: Vec<Option<(Half, u64)>>,
    /// The other men's moves seen in the run (from, to), and the entries each reaches, by the
    /// run's man's square.
    moves: Vec<(Square, Square)>,
    by_move: Vec<[Option<(Half, u64)>; 64]>,
}

/// `dtm_value` of each position of a run of `own`'s positions that differ only in the square
/// of `man` (a colour and kind of which the endgame has one man, not a king): `frame` holds
/// the other men and the side to move, `run` the man's square and the result of each
/// position. The entries of the successors that keep the material are numbered for the whole
/// run at once, a move of the other men at a time (`FrameCache::index_own_each`), and the
/// successors his own moves reach are numbered once for all his squares. `out(k, value)` for
/// `run[k]`, the value None as `dtm_value`'s.
pub fn dtm_run(
    frame: &TbPosition,
    man: (Color, PieceType),
    run: &[(Square, Wdl5)],
    own: &EndgameTables,
    all: &(impl Endgames + ?Sized),
    scratch: &mut RunScratch,
    mut out: impl FnMut(usize, Option<TbValue>),
) {
    let pawn = PieceType::Pawn.index();
    debug_assert!(frame.pieces[0][pawn].0 | frame.pieces[1][pawn].0 == 0);
    debug_assert!(frame.ep.is_none() && man.1 != PieceType::King);
    let index = own.index();
    let (mc, mk) = (man.0.index(), man.1.index());
    let RunScratch {
        frames,
        by_man,
        moves,
        by_move,
    } = scratch;
    by_man.clear();
    moves.clear();
    let squares = run.iter().fold(0u64, |b, &(s, _)| b | 1 << s.index());
    for (k, &(s, result)) in run.iter().enumerate() {
        let won = match result.without_rule() {
            Wdl5::Win => true,
            Wdl5::Loss => false,
            _ => {
                out(k, Some(TbValue::DRAW));
                continue;
            }
        };
        let mut tb = *frame;
        tb.pieces[mc][mk].set(s);
        let v = with_scratch(|pos| {
            set_position(pos, &tb);
            let mut reach = Successors::of(pos, &tb, own, all);
            dtm_by_moves(pos, won, all, |m| {
                // Pawnless (`EndgameTables::run_man`): a move that captures nothing stays.
                if pos.piece_at(m.to()).is_some() {
                    let (succ, effect) = successor(pos, &tb, m);
                    return reach.locate(m, effect, &succ);
                }
                let entry = if m.from() == s {
                    if by_man.is_empty() {
                        let mut after = *frame;
                        after.stm = !frame.stm;
                        by_man.resize(64, None);
                        let empty = !frame.occupied().0;
                        frames.index_own_each(index, &after, man, empty, |t, e| {
                            by_man[t.index()] = e
                        });
                    }
                    by_man[m.to().index()]
                } else {
                    let key = (m.from(), m.to());
                    let at = match moves.iter().position(|&k| k == key) {
                        Some(at) => at,
                        None => {
                            let (mut other, _) = successor(pos, &tb, m);
                            other.pieces[mc][mk].clear(s);
                            if by_move.len() == moves.len() {
                                by_move.push([None; 64]);
                            }
                            let entries = &mut by_move[moves.len()];
                            let free = squares & !(1 << m.to().index());
                            frames.index_own_each(index, &other, man, free, |t, e| {
                                entries[t.index()] = e
                            });
                            moves.push(key);
                            moves.len() - 1
                        }
                    };
                    by_move[at][s.index()]
                };
                let (h, i) = entry?;
                Some(Some((own, h, i)))
            })
        });
        out(k, v);
    }
}

thread_local! {
    /// Positions to set up and generate moves in, one per level of `dtm_value`'s recursion,
    /// made once per thread and kept (a position holds its history's allocation).
    static SCRATCH: RefCell<Vec<Position>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a position of this thread's scratch, taken for the call's duration.
fn with_scratch<R>(f: impl FnOnce(&mut Position) -> R) -> R {
    let mut pos = SCRATCH
        .with(|s| s.borrow_mut().pop())
        .unwrap_or_else(Position::startpos);
    let r = f(&mut pos);
    SCRATCH.with(|s| s.borrow_mut().push(pos));
    r
}

/// Sets `pos` to the position `tb` (no castling, fresh counters).
pub fn set_position(pos: &mut Position, tb: &TbPosition) {
    pos.clear();
    for color in Color::BOTH {
        for kind in PieceType::ALL {
            for sq in tb.pieces[color.index()][kind.index()] {
                pos.put_piece(Piece::new(color, kind), sq);
            }
        }
    }
    pos.set_side_to_move(tb.stm);
    if let Some(ep) = tb.ep {
        pos.set_ep_if_capturable(ep);
    }
    pos.refresh_checkers();
}

/// What a move does to the 50-move counter and the material.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Effect {
    /// A piece moves and captures nothing: the counter runs on, the endgame is the same.
    Stays,
    /// A pawn moves, neither capturing nor promoting: the counter zeroes, the endgame is the
    /// same.
    Zeroes,
    /// A capture or a promotion: the counter zeroes and the material changes.
    Converts,
}

impl Effect {
    /// Does the move zero the 50-move counter?
    #[inline(always)]
    pub fn zeroes(self) -> bool {
        self != Effect::Stays
    }
}

/// The position after `m`, a legal move of `pos` (whose men are those of `tb`), and what the
/// move does. Built from the move's squares rather than by make/unmake: which moves are legal
/// is the chess core's answer, what they do to the men is plain.
#[inline]
pub fn successor(pos: &Position, tb: &TbPosition, m: Move) -> (TbPosition, Effect) {
    let us = tb.stm;
    let (ui, ti) = (us.index(), (!us).index());
    let (from, to) = (m.from(), m.to());
    let mover = pos.piece_at(from).expect("a legal move has a mover").kind;
    let mut s = *tb;
    s.stm = !us;
    s.ep = None;
    let mut effect = if mover == PieceType::Pawn {
        Effect::Zeroes
    } else {
        Effect::Stays
    };
    if let Some(victim) = pos.piece_at(to) {
        s.pieces[ti][victim.kind.index()].clear(to);
        effect = Effect::Converts;
    }
    s.pieces[ui][mover.index()].clear(from);
    let lands = match m.kind() {
        MoveKind::Promotion(kind) => {
            effect = Effect::Converts;
            kind
        }
        _ => mover,
    };
    s.pieces[ui][lands.index()].set(to);
    match m.kind() {
        MoveKind::EnPassant => {
            let victim = Square::new(to.file(), from.rank());
            s.pieces[ti][PieceType::Pawn.index()].clear(victim);
            effect = Effect::Converts;
        }
        MoveKind::DoublePush => {
            s.ep = Some(Square::new(from.file(), (from.rank() + to.rank()) / 2))
        }
        _ => {}
    }
    (s, effect)
}
