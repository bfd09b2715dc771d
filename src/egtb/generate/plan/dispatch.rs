//! Which endgames of a plan can be built now: those still to build whose sub-endgames are all
//! done, taken in the plan's order. The run on this machine's cores (`here`) and the MPI run
//! (`distribute`) both hand out work through this.

use super::Plan;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Waiting,
    Running,
    Done,
}

pub struct Dispatch {
    state: Vec<State>,
    /// The steps each step waits for (its sub-endgames still to build).
    after: Vec<Vec<usize>>,
}

impl Dispatch {
    /// The steps of `plan` marked in `missing` are to build; the others count as done.
    pub fn new(plan: &Plan, missing: &[bool]) -> Dispatch {
        let after = plan
            .steps
            .iter()
            .map(|st| {
                let subs = st.endgame.sub_endgames();
                (0..plan.steps.len())
                    .filter(|&j| missing[j] && subs.contains(&plan.steps[j].endgame))
                    .collect()
            })
            .collect();
        let state = missing
            .iter()
            .map(|&b| if b { State::Waiting } else { State::Done })
            .collect();
        Dispatch { state, after }
    }

    /// The first step waiting whose sub-endgames are done, if any.
    pub fn next(&self) -> Option<usize> {
        (0..self.state.len()).find(|&k| {
            self.state[k] == State::Waiting
                && self.after[k].iter().all(|&j| self.state[j] == State::Done)
        })
    }

    pub fn start(&mut self, k: usize) {
        self.state[k] = State::Running;
    }

    /// Step `k`'s build was lost (its worker died): it waits again.
    pub fn requeue(&mut self, k: usize) {
        self.state[k] = State::Waiting;
    }

    pub fn finish(&mut self, k: usize) {
        self.state[k] = State::Done;
    }

    #[cfg(feature = "mpi")]
    pub fn is_done(&self, k: usize) -> bool {
        self.state[k] == State::Done
    }

    #[cfg(feature = "mpi")]
    pub fn all_done(&self) -> bool {
        self.state.iter().all(|&s| s == State::Done)
    }

    pub fn running(&self) -> usize {
        self.state.iter().filter(|&&s| s == State::Running).count()
    }

    /// Steps not done.
    #[cfg(feature = "mpi")]
    pub fn left(&self) -> usize {
        self.state.iter().filter(|&&s| s != State::Done).count()
    }
}
