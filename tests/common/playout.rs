//! Play-outs shared by `tests/tables_play.rs` and `benches/playout.rs`: random positions of an
//! endgame won under the 50-move rule, and games from them between a winner (SZ°Z50Z, SM⁻ or
//! SZ⁻) and the perfect defender (the mirror strategy), judged with the real half-move counter.
#![allow(dead_code)]

use fortress::chess::{legal_moves, Color, Piece, PieceType, Position};
use fortress::egtb::format::Metric;
use fortress::egtb::play::probe::{Registry, Wdl};
use fortress::egtb::play::strategy::analyse_root;
use fortress::egtb::play::strategy::{choose, choose_least};
use fortress::egtb::{EndgameIndex, Material, TbPosition};

pub fn fen_of(tb: &TbPosition, halfmove: u16) -> String {
    let mut board = [None; 64];
    for c in Color::BOTH {
        for k in PieceType::ALL {
            let mut bb = tb.pieces[c.index()][k.index()];
            while bb.any() {
                let sq = bb.lsb();
                board[sq.index()] = Some(Piece::new(c, k).fen_char());
                bb = fortress::chess::Bitboard(bb.0 & (bb.0 - 1));
            }
        }
    }
    let mut s = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                Some(ch) => {
                    if empty > 0 {
                        s.push_str(&empty.to_string());
                        empty = 0;
                    }
                    s.push(ch);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            s.push_str(&empty.to_string());
        }
        if rank > 0 {
            s.push('/');
        }
    }
    let stm = if tb.stm == Color::White { "w" } else { "b" };
    format!("{s} {stm} - - {halfmove} 1")
}

/// Random positions of `name` that the side to move wins under the 50-move rule with counter
/// `h`.
pub fn won_positions(reg: &Registry, name: &str, h: u16, n: usize, seed: u64) -> Vec<Position> {
    let m = Material::parse(name).unwrap();
    let index = EndgameIndex::new(&m);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < n && tries < 200_000 {
        tries += 1;
        let half = index.stored_halves()[rng.usize(..index.stored_halves().len())];
        let idx = rng.u64(..index.size(half));
        let Some(tb) = index.decode(half, idx) else {
            continue;
        };
        let Ok(pos) = Position::from_fen(&fen_of(&tb, h)) else {
            continue;
        };
        if legal_moves(&pos).is_empty() {
            continue;
        }
        if let Some(p) = reg.probe(&pos) {
            if p.wdl50(h) == Wdl::Win {
                out.push(pos);
            }
        }
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
pub enum End {
    Mate,
    FiftyMoves,
    Other(String),
}

/// The winner's strategy in a play-out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Winner {
    /// SZ°Z50Z, the engine's own.
    Sz50,
    /// SM⁻: the least DTM.
    Dtm,
    /// SZ⁻: the least DTZ.
    Dtz,
}

/// Plays from `pos` (winner to move) with the winner's strategy against the perfect defender
/// (the mirror of SZ°Z50Z).
pub fn play(reg: &Registry, start: &Position, strategy: Winner) -> (End, usize) {
    let mut pos = start.clone();
    let winner = pos.side_to_move();
    for ply in 0..1000 {
        let moves = legal_moves(&pos);
        if moves.is_empty() {
            return if pos.in_check() && pos.side_to_move() != winner {
                (End::Mate, ply)
            } else {
                (
                    End::Other(format!("stalemate or mated winner at {}", pos.to_fen())),
                    ply,
                )
            };
        }
        if pos.halfmove_clock() >= 100 {
            return (End::FiftyMoves, ply);
        }
        let Some(a) = analyse_root(reg, &pos, false) else {
            // Bare kings or a missing table: the win is gone.
            return (
                End::Other(format!("left the tables at {}", pos.to_fen())),
                ply,
            );
        };
        let values: Vec<_> = a.moves.iter().map(|m| m.1).collect();
        let least = match strategy {
            Winner::Sz50 => None,
            Winner::Dtm => Some(Metric::Dtm),
            Winner::Dtz => Some(Metric::Dtz),
        };
        let i = match least {
            Some(metric) if pos.side_to_move() == winner => choose_least(&values, metric).unwrap(),
            _ => choose(pos.halfmove_clock(), &values).unwrap().best,
        };
        pos.make_move(a.moves[i].0);
    }
    (End::Other("no end in 1000 plies".into()), 1000)
}
