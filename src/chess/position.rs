//! The position: men on squares (bitboards plus a mailbox), side to move, castling rights,
//! en-passant square, clocks, and the undo stack that make/unmake and repetition detection share.
//!
//! The en-passant square is set only when a legal en-passant capture exists, so that it enters the
//! Zobrist key only when it changes the position (and repetitions are found as the rules define them).

use super::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use super::bitboard::Bitboard;
use super::types::{Color, Move, MoveKind, Piece, PieceType, Square};
use super::zobrist::KEYS;

/// Castling rights as a 4-bit set.
pub const WHITE_OO: u8 = 1;
pub const WHITE_OOO: u8 = 2;
pub const BLACK_OO: u8 = 4;
pub const BLACK_OOO: u8 = 8;

/// What `unmake_move` needs to restore, and the key for repetition detection.
#[derive(Clone, Copy)]
struct Undo {
    mv: Move,
    captured: Option<Piece>,
    castling: u8,
    ep: Option<Square>,
    halfmove: u16,
    key: u64,
    pawn_key: u64,
    checkers: Bitboard,
}

#[derive(Clone)]
pub struct Position {
    by_color: [Bitboard; 2],
    by_kind: [Bitboard; 6],
    board: [Option<Piece>; 64],
    stm: Color,
    castling: u8,
    ep: Option<Square>,
    halfmove: u16,
    fullmove: u16,
    key: u64,
    pawn_key: u64,
    checkers: Bitboard,
    history: Vec<Undo>,
}

/// The castling right lost when a man leaves or arrives on a square (king and rook home squares).
fn rights_touched(sq: Square) -> u8 {
    match sq {
        Square::E1 => WHITE_OO | WHITE_OOO,
        Square::H1 => WHITE_OO,
        Square::A1 => WHITE_OOO,
        Square::E8 => BLACK_OO | BLACK_OOO,
        Square::H8 => BLACK_OO,
        Square::A8 => BLACK_OOO,
        _ => 0,
    }
}

/// For a castling king move (king's destination), the rook's from and to squares.
pub(crate) fn castling_rook(king_to: Square) -> (Square, Square) {
    match king_to {
        Square::G1 => (Square::H1, Square::F1),
        Square::C1 => (Square::A1, Square::D1),
        Square::G8 => (Square::H8, Square::F8),
        _ => (Square::A8, Square::D8),
    }
}

impl Position {
    /// An empty board with White to move; `fen` fills it and validates the result.
    pub(crate) fn empty() -> Position {
        Position {
            by_color: [Bitboard::EMPTY; 2],
            by_kind: [Bitboard::EMPTY; 6],
            board: [None; 64],
            stm: Color::White,
            castling: 0,
            ep: None,
            halfmove: 0,
            fullmove: 1,
            key: 0,
            pawn_key: 0,
            checkers: Bitboard::EMPTY,
            history: Vec::with_capacity(1024),
        }
    }

    pub fn startpos() -> Position {
        Position::from_fen(super::fen::START_FEN).expect("the start position is legal")
    }

    // ----- accessors -----

    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.stm
    }
    #[inline(always)]
    pub fn pieces(&self, color: Color, kind: PieceType) -> Bitboard {
        self.by_color[color.index()] & self.by_kind[kind.index()]
    }
    #[inline(always)]
    pub fn kind_bb(&self, kind: PieceType) -> Bitboard {
        self.by_kind[kind.index()]
    }
    #[inline(always)]
    pub fn color_bb(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }
    #[inline(always)]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }
    #[inline(always)]
    pub fn king_square(&self, color: Color) -> Square {
        self.pieces(color, PieceType::King).lsb()
    }
    #[inline(always)]
    pub fn castling_rights(&self) -> u8 {
        self.castling
    }
    /// The en-passant target square, present only when a legal en-passant capture exists.
    #[inline(always)]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep
    }
    #[inline(always)]
    pub fn halfmove_clock(&self) -> u16 {
        self.halfmove
    }
    #[inline(always)]
    pub fn fullmove_number(&self) -> u16 {
        self.fullmove
    }
    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.key
    }
    /// Zobrist key of the pawns alone (and nothing else), for pawn-structure caches.
    #[inline(always)]
    pub fn pawn_key(&self) -> u64 {
        self.pawn_key
    }
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }
    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.checkers.any()
    }
    /// Number of men on the board, kings included.
    #[inline(always)]
    pub fn men(&self) -> u32 {
        self.occupied().count()
    }
    /// Plies made since the position was set up (the length of the undo stack).
    #[inline(always)]
    pub fn plies_played(&self) -> usize {
        self.history.len()
    }
    /// The move that led to this position, if it was made on this board.
    pub fn last_move(&self) -> Option<Move> {
        self.history.last().map(|u| u.mv).filter(|m| !m.is_none())
    }
    /// The man captured by the move that led here, if any.
    pub fn last_captured(&self) -> Option<Piece> {
        self.history.last().and_then(|u| u.captured)
    }

    // ----- attacks -----

    /// Every man of either colour that attacks `sq`, given the occupancy `occ`.
    #[inline(always)]
    pub fn attackers_to(&self, sq: Square, occ: Bitboard) -> Bitboard {
        let bishops =
            self.by_kind[PieceType::Bishop.index()] | self.by_kind[PieceType::Queen.index()];
        let rooks = self.by_kind[PieceType::Rook.index()] | self.by_kind[PieceType::Queen.index()];
        (pawn_attacks(Color::White, sq) & self.pieces(Color::Black, PieceType::Pawn))
            | (pawn_attacks(Color::Black, sq) & self.pieces(Color::White, PieceType::Pawn))
            | (knight_attacks(sq) & self.by_kind[PieceType::Knight.index()])
            | (king_attacks(sq) & self.by_kind[PieceType::King.index()])
            | (bishop_attacks(sq, occ) & bishops)
            | (rook_attacks(sq, occ) & rooks)
    }

    /// Whether `by` attacks `sq` with the given occupancy.
    #[inline(always)]
    pub fn is_attacked(&self, sq: Square, by: Color, occ: Bitboard) -> bool {
        let them = self.by_color[by.index()];
        let bishops = (self.by_kind[PieceType::Bishop.index()]
            | self.by_kind[PieceType::Queen.index()])
            & them;
        let rooks =
            (self.by_kind[PieceType::Rook.index()] | self.by_kind[PieceType::Queen.index()]) & them;
        (pawn_attacks(!by, sq) & self.by_kind[PieceType::Pawn.index()] & them).any()
            || (knight_attacks(sq) & self.by_kind[PieceType::Knight.index()] & them).any()
            || (king_attacks(sq) & self.by_kind[PieceType::King.index()] & them).any()
            || (bishop_attacks(sq, occ) & bishops).any()
            || (rook_attacks(sq, occ) & rooks).any()
    }

    /// Men of `color` that stand alone between `color`'s king and an enemy slider.
    #[inline(always)]
    pub fn pinned(&self, color: Color) -> Bitboard {
        let ksq = self.king_square(color);
        let them = self.by_color[(!color).index()];
        let bishops = (self.by_kind[PieceType::Bishop.index()]
            | self.by_kind[PieceType::Queen.index()])
            & them;
        let rooks =
            (self.by_kind[PieceType::Rook.index()] | self.by_kind[PieceType::Queen.index()]) & them;
        let snipers = (bishop_attacks(ksq, Bitboard::EMPTY) & bishops)
            | (rook_attacks(ksq, Bitboard::EMPTY) & rooks);
        let occ = self.occupied();
        let mut pinned = Bitboard::EMPTY;
        for s in snipers {
            let blockers = between(ksq, s) & occ;
            if blockers.any() && !blockers.more_than_one() {
                pinned |= blockers & self.by_color[color.index()];
            }
        }
        pinned
    }

    /// Whether a pawn of the side to move on `from` may take en passant onto `ep` without leaving
    /// its king in check: both pawns leave their rank at once, which can open a line to the king.
    pub(crate) fn ep_capture_is_legal(&self, from: Square, ep: Square) -> bool {
        let us = self.stm;
        let ksq = self.king_square(us);
        let captured = ep.offset(-us.forward());
        let occ = (self.occupied() ^ Bitboard::from_square(from) ^ Bitboard::from_square(captured))
            | Bitboard::from_square(ep);
        let them = self.by_color[(!us).index()];
        let bishops = (self.by_kind[PieceType::Bishop.index()]
            | self.by_kind[PieceType::Queen.index()])
            & them;
        let rooks =
            (self.by_kind[PieceType::Rook.index()] | self.by_kind[PieceType::Queen.index()]) & them;
        (bishop_attacks(ksq, occ) & bishops).is_empty()
            && (rook_attacks(ksq, occ) & rooks).is_empty()
            && (knight_attacks(ksq) & self.by_kind[PieceType::Knight.index()] & them).is_empty()
            && (pawn_attacks(us, ksq)
                & self.by_kind[PieceType::Pawn.index()]
                & them
                & !Bitboard::from_square(captured))
            .is_empty()
    }

    /// Whether the side to move has a legal en-passant capture onto `ep`.
    pub(crate) fn has_legal_ep_capture(&self, ep: Square) -> bool {
        let us = self.stm;
        let capturers = pawn_attacks(!us, ep) & self.pieces(us, PieceType::Pawn);
        let mut capturers = capturers;
        Iterator::any(&mut capturers, |from| self.ep_capture_is_legal(from, ep))
    }

    // ----- building -----

    /// Empties the board and resets the state, keeping the history's allocation: lets a tool
    /// that sets up many positions (the table verifier) reuse one `Position` without allocating.
    pub(crate) fn clear(&mut self) {
        self.by_color = [Bitboard::EMPTY; 2];
        self.by_kind = [Bitboard::EMPTY; 6];
        self.board = [None; 64];
        self.stm = Color::White;
        self.castling = 0;
        self.ep = None;
        self.halfmove = 0;
        self.fullmove = 1;
        self.key = 0;
        self.pawn_key = 0;
        self.checkers = Bitboard::EMPTY;
        self.history.clear();
    }

    #[inline(always)]
    pub(crate) fn put_piece(&mut self, piece: Piece, sq: Square) {
        let bb = Bitboard::from_square(sq);
        self.by_color[piece.color.index()] |= bb;
        self.by_kind[piece.kind.index()] |= bb;
        self.board[sq.index()] = Some(piece);
        self.key ^= KEYS.pieces[piece.index()][sq.index()];
        if piece.kind == PieceType::Pawn {
            self.pawn_key ^= KEYS.pieces[piece.index()][sq.index()];
        }
    }

    #[inline(always)]
    fn remove_piece(&mut self, piece: Piece, sq: Square) {
        let bb = Bitboard::from_square(sq);
        self.by_color[piece.color.index()] ^= bb;
        self.by_kind[piece.kind.index()] ^= bb;
        self.board[sq.index()] = None;
        self.key ^= KEYS.pieces[piece.index()][sq.index()];
        if piece.kind == PieceType::Pawn {
            self.pawn_key ^= KEYS.pieces[piece.index()][sq.index()];
        }
    }

    #[inline(always)]
    fn move_piece(&mut self, piece: Piece, from: Square, to: Square) {
        let bb = Bitboard::from_square(from) | Bitboard::from_square(to);
        self.by_color[piece.color.index()] ^= bb;
        self.by_kind[piece.kind.index()] ^= bb;
        self.board[from.index()] = None;
        self.board[to.index()] = Some(piece);
        let k = KEYS.pieces[piece.index()][from.index()] ^ KEYS.pieces[piece.index()][to.index()];
        self.key ^= k;
        if piece.kind == PieceType::Pawn {
            self.pawn_key ^= k;
        }
    }

    pub(crate) fn set_side_to_move(&mut self, color: Color) {
        if self.stm != color {
            self.key ^= KEYS.black_to_move;
            self.stm = color;
        }
    }

    pub(crate) fn set_castling(&mut self, rights: u8) {
        self.key ^= KEYS.castling[self.castling as usize] ^ KEYS.castling[rights as usize];
        self.castling = rights;
    }

    /// Sets the en-passant square only if a legal capture onto it exists (see the module note).
    pub(crate) fn set_ep_if_capturable(&mut self, ep: Square) {
        if self.has_legal_ep_capture(ep) {
            self.ep = Some(ep);
            self.key ^= KEYS.ep_file[ep.file() as usize];
        }
    }

    pub(crate) fn set_clocks(&mut self, halfmove: u16, fullmove: u16) {
        self.halfmove = halfmove;
        self.fullmove = fullmove;
    }

    pub(crate) fn refresh_checkers(&mut self) {
        let ksq = self.king_square(self.stm);
        self.checkers =
            self.attackers_to(ksq, self.occupied()) & self.by_color[(!self.stm).index()];
    }

    // ----- make / unmake -----

    /// Saves what unmaking needs, clears the en-passant square and advances the clock: the part
    /// of making a move that is the same for every move, the null move included.
    #[inline(always)]
    fn begin_move(&mut self, mv: Move, captured: Option<Piece>) {
        self.history.push(Undo {
            mv,
            captured,
            castling: self.castling,
            ep: self.ep,
            halfmove: self.halfmove,
            key: self.key,
            pawn_key: self.pawn_key,
            checkers: self.checkers,
        });
        if let Some(ep) = self.ep.take() {
            self.key ^= KEYS.ep_file[ep.file() as usize];
        }
        self.halfmove += 1;
    }

    /// Plays a legal move (as produced by the move generator or `parse_uci_move`).
    pub fn make_move(&mut self, m: Move) {
        let us = self.stm;
        let them = !us;
        let from = m.from();
        let to = m.to();
        let piece = self.board[from.index()].expect("make_move: no man on the from square");
        let captured = match m.kind() {
            MoveKind::EnPassant => Some(Piece::new(them, PieceType::Pawn)),
            MoveKind::Castle => None,
            _ => self.board[to.index()],
        };
        self.begin_move(m, captured);
        match m.kind() {
            MoveKind::Castle => {
                let (rook_from, rook_to) = castling_rook(to);
                self.move_piece(piece, from, to);
                self.move_piece(Piece::new(us, PieceType::Rook), rook_from, rook_to);
            }
            MoveKind::EnPassant => {
                self.remove_piece(Piece::new(them, PieceType::Pawn), to.offset(-us.forward()));
                self.move_piece(piece, from, to);
            }
            MoveKind::Promotion(kind) => {
                if let Some(c) = captured {
                    self.remove_piece(c, to);
                }
                self.remove_piece(piece, from);
                self.put_piece(Piece::new(us, kind), to);
            }
            MoveKind::Normal | MoveKind::DoublePush => {
                if let Some(c) = captured {
                    self.remove_piece(c, to);
                }
                self.move_piece(piece, from, to);
            }
        }
        if captured.is_some() || piece.kind == PieceType::Pawn {
            self.halfmove = 0;
        }
        let touched = rights_touched(from) | rights_touched(to);
        if self.castling & touched != 0 {
            self.set_castling(self.castling & !touched);
        }
        if us == Color::Black {
            self.fullmove += 1;
        }
        self.key ^= KEYS.black_to_move;
        self.stm = them;
        if m.kind() == MoveKind::DoublePush {
            self.set_ep_if_capturable(from.offset(us.forward()));
        }
        self.refresh_checkers();
    }

    /// Takes back the last move made with `make_move`.
    pub fn unmake_move(&mut self) {
        let u = self
            .history
            .pop()
            .expect("unmake_move: no move to take back");
        let m = u.mv;
        let them = self.stm;
        let us = !them;
        let from = m.from();
        let to = m.to();
        match m.kind() {
            MoveKind::Castle => {
                let (rook_from, rook_to) = castling_rook(to);
                self.move_piece(Piece::new(us, PieceType::Rook), rook_to, rook_from);
                self.move_piece(Piece::new(us, PieceType::King), to, from);
            }
            MoveKind::EnPassant => {
                self.move_piece(Piece::new(us, PieceType::Pawn), to, from);
                self.put_piece(Piece::new(them, PieceType::Pawn), to.offset(-us.forward()));
            }
            MoveKind::Promotion(kind) => {
                self.remove_piece(Piece::new(us, kind), to);
                self.put_piece(Piece::new(us, PieceType::Pawn), from);
                if let Some(c) = u.captured {
                    self.put_piece(c, to);
                }
            }
            MoveKind::Normal | MoveKind::DoublePush => {
                let piece = self.board[to.index()].expect("unmake_move: no man on the to square");
                self.move_piece(piece, to, from);
                if let Some(c) = u.captured {
                    self.put_piece(c, to);
                }
            }
        }
        if us == Color::Black {
            self.fullmove -= 1;
        }
        self.stm = us;
        self.castling = u.castling;
        self.ep = u.ep;
        self.halfmove = u.halfmove;
        self.key = u.key;
        self.pawn_key = u.pawn_key;
        self.checkers = u.checkers;
    }

    /// Passes the move (for null-move pruning); never called in check.
    pub fn make_null(&mut self) {
        debug_assert!(!self.in_check());
        self.begin_move(Move::NONE, None);
        self.key ^= KEYS.black_to_move;
        self.stm = !self.stm;
        self.checkers = Bitboard::EMPTY;
    }

    pub fn unmake_null(&mut self) {
        let u = self
            .history
            .pop()
            .expect("unmake_null: nothing to take back");
        self.stm = !self.stm;
        self.ep = u.ep;
        self.halfmove = u.halfmove;
        self.key = u.key;
        self.checkers = u.checkers;
    }

    /// Forgets the undo stack (the moves stay played): used after a game's moves are set up, so
    /// that the stack cannot grow without bound over a long game. Keys for repetition are kept
    /// as far back as the half-move clock reaches.
    pub fn forget_history_before_clock(&mut self) {
        let keep = (self.halfmove as usize).min(self.history.len());
        let cut = self.history.len() - keep;
        self.history.drain(..cut);
    }

    // ----- draws -----

    /// How often this position occurred before, since the last zeroing move (2 = three-fold).
    pub fn repetitions(&self) -> u32 {
        let n = self.history.len();
        let reach = (self.halfmove as usize).min(n);
        let mut count = 0;
        let mut i = 4;
        while i <= reach {
            if self.history[n - i].key == self.key {
                count += 1;
            }
            i += 2;
        }
        count
    }

    /// Whether any position since the last zeroing move, this one included, occurred earlier in
    /// that stretch: play is going round in circles.
    pub fn has_repeated(&self) -> bool {
        let n = self.history.len();
        let reach = (self.halfmove as usize).min(n);
        let key = |ago: usize| {
            if ago == 0 {
                self.key
            } else {
                self.history[n - ago].key
            }
        };
        (0..=reach).any(|j| (j + 4..=reach).step_by(2).any(|i| key(i) == key(j)))
    }

    /// Whether the position repeats one that occurred within the last `plies` plies (and after
    /// the last zeroing move): the search treats a repetition inside its own tree as a draw.
    pub fn repeats_within(&self, plies: usize) -> bool {
        let n = self.history.len();
        let reach = (self.halfmove as usize).min(n).min(plies);
        let mut i = 4;
        while i <= reach {
            if self.history[n - i].key == self.key {
                return true;
            }
            i += 2;
        }
        false
    }

    /// Neither side can ever mate: KK, K+minor vs K, or bishops all on one colour.
    pub fn insufficient_material(&self) -> bool {
        let heavy = self.kind_bb(PieceType::Pawn)
            | self.kind_bb(PieceType::Rook)
            | self.kind_bb(PieceType::Queen);
        if heavy.any() {
            return false;
        }
        let knights = self.kind_bb(PieceType::Knight);
        let bishops = self.kind_bb(PieceType::Bishop);
        let minors = (knights | bishops).count();
        if minors <= 1 {
            return true;
        }
        knights.is_empty()
            && ((bishops & Bitboard::LIGHT_SQUARES).is_empty()
                || (bishops & Bitboard::DARK_SQUARES).is_empty())
    }

    /// A hash of the full board state recomputed from scratch; the incremental key must equal it.
    pub fn compute_key(&self) -> u64 {
        let mut k = 0;
        for sq in self.occupied() {
            let p = self.board[sq.index()].expect("occupied square holds a man");
            k ^= KEYS.pieces[p.index()][sq.index()];
        }
        k ^= KEYS.castling[self.castling as usize];
        if let Some(ep) = self.ep {
            k ^= KEYS.ep_file[ep.file() as usize];
        }
        if self.stm == Color::Black {
            k ^= KEYS.black_to_move;
        }
        k
    }

    /// The position with colours exchanged and the board turned over (same value for the mover).
    pub fn color_flipped(&self) -> Position {
        let mut p = Position::empty();
        for sq in self.occupied() {
            let man = self.board[sq.index()].expect("occupied square holds a man");
            p.put_piece(Piece::new(!man.color, man.kind), sq.flip_rank());
        }
        p.set_side_to_move(!self.stm);
        let c = self.castling;
        p.set_castling((c & 3) << 2 | (c >> 2));
        if let Some(ep) = self.ep {
            p.set_ep_if_capturable(ep.flip_rank());
        }
        p.set_clocks(self.halfmove, self.fullmove);
        p.refresh_checkers();
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::parse_uci_move;

    fn play(pos: &mut Position, moves: &str) {
        for m in moves.split_whitespace() {
            let mv = parse_uci_move(pos, m).unwrap();
            pos.make_move(mv);
        }
    }

    #[test]
    fn a_circle_since_the_last_zeroing_move_is_seen_anywhere_in_it() {
        let mut pos = Position::startpos();
        play(&mut pos, "g1f3 g8f6 f3g1");
        assert!(!pos.has_repeated());
        // Black's knight goes back: the start position stands again.
        play(&mut pos, "f6g8");
        assert!(pos.has_repeated() && pos.repetitions() == 1);
        // Moving on, the circle behind is still seen, though this position is new.
        play(&mut pos, "b1c3");
        assert!(pos.has_repeated() && pos.repetitions() == 0);
        // A pawn move starts afresh.
        play(&mut pos, "e7e5");
        assert!(!pos.has_repeated());
    }
}
