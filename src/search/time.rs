//! Time management: from the clock, a soft limit (no new iteration is started past it; it
//! stretches when the best move is unstable and shrinks when one move stands out) and a hard
//! limit (the search stops mid-iteration). `Move Overhead` is kept in reserve for the GUI's lag.

use std::time::Duration;

/// What the GUI said about the clock for the side to move (milliseconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    pub time: Option<u64>,
    pub increment: u64,
    pub moves_to_go: Option<u32>,
    pub move_time: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    pub soft: Duration,
    pub hard: Duration,
}

/// The time to spend on this move; `None` when the search has no time limit.
pub fn budget(clock: &Clock, overhead_ms: u64) -> Option<Budget> {
    if let Some(mt) = clock.move_time {
        let t = Duration::from_millis(mt.saturating_sub(overhead_ms).max(1));
        return Some(Budget { soft: t, hard: t });
    }
    let time = clock.time?;
    // What may be spent in all, leaving the overhead on the clock.
    let usable = time.saturating_sub(overhead_ms).max(1);
    let mtg = clock.moves_to_go.unwrap_or(40).clamp(1, 50) as u64;
    // Spread the time over the moves to go, counting increments still to come.
    let mut soft = (usable / mtg).saturating_add(clock.increment / 4 * 3);
    // With several moves to go, never plan to spend more than a fifth of the clock on one move.
    let cap = if mtg == 1 {
        usable * 7 / 10
    } else {
        usable / 5
    };
    soft = soft.min(cap).max(1);
    let hard = (soft * 4)
        .min(if mtg == 1 {
            usable * 8 / 10
        } else {
            usable / 3
        })
        .max(soft);
    Some(Budget {
        soft: Duration::from_millis(soft),
        hard: Duration::from_millis(hard),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sudden_death_spends_a_fraction() {
        let b = budget(
            &Clock {
                time: Some(60_000),
                ..Default::default()
            },
            10,
        )
        .unwrap();
        assert!(
            b.soft.as_millis() > 1000 && b.soft.as_millis() < 3000,
            "{:?}",
            b
        );
        assert!(b.hard >= b.soft && b.hard.as_millis() <= 20_000);
    }

    #[test]
    fn never_plans_past_the_clock() {
        for time in [1u64, 5, 20, 50, 100, 1000] {
            for inc in [0u64, 20, 100, 1000] {
                for mtg in [None, Some(1), Some(2), Some(40)] {
                    let c = Clock {
                        time: Some(time),
                        increment: inc,
                        moves_to_go: mtg,
                        move_time: None,
                    };
                    let b = budget(&c, 10).unwrap();
                    assert!(
                        b.hard.as_millis() as u64 <= time.saturating_sub(10).max(1),
                        "{:?} {:?}",
                        c,
                        b
                    );
                }
            }
        }
    }

    #[test]
    fn movetime_is_exact_less_overhead() {
        let b = budget(
            &Clock {
                move_time: Some(1000),
                ..Default::default()
            },
            30,
        )
        .unwrap();
        assert_eq!(b.hard, Duration::from_millis(970));
        assert!(budget(&Clock::default(), 30).is_none());
    }
}
