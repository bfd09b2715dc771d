//! A plan's units of work run on several machines, simulated: how long the whole plan takes on
//! N machines, each running one unit at a time with all its cores, from the units' estimated
//! costs and the order they must keep. Ready units go first by the longest chain of work that
//! waits on them (critical-path list scheduling), which finishes within twice the optimum
//! (Graham's bound) and, on these plans, near the larger of the two lower bounds it prints: the
//! longest chain, and the work shared evenly.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A unit of work: its seconds on one machine, and the units (earlier in the list) it reads.
#[derive(Clone, Debug)]
pub struct Job {
    pub seconds: f64,
    pub after: Vec<usize>,
}

/// What a simulation gives.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    pub machines: usize,
    /// Seconds until the last unit is done.
    pub finish: f64,
    /// The lower bounds: the longest chain of units, and the work over the machines.
    pub chain: f64,
    pub shared: f64,
}

impl Schedule {
    /// The share of the machines' time spent working.
    pub fn busy(&self) -> f64 {
        if self.finish == 0.0 {
            return 1.0;
        }
        self.shared / self.finish
    }
}

/// An `f64` ordered totally, for the heaps.
#[derive(Clone, Copy, PartialEq)]
struct Key(f64, usize);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// Each job's seconds plus the longest chain of jobs that wait on it.
fn chains(jobs: &[Job]) -> Vec<f64> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); jobs.len()];
    for (j, job) in jobs.iter().enumerate() {
        for &a in &job.after {
            assert!(a < j, "a job reads only jobs before it");
            next[a].push(j);
        }
    }
    let mut chain = vec![0.0; jobs.len()];
    for j in (0..jobs.len()).rev() {
        let after = next[j].iter().map(|&n| chain[n]).fold(0.0, f64::max);
        chain[j] = jobs[j].seconds + after;
    }
    chain
}

/// Runs `jobs` on `machines` machines.
pub fn simulate(jobs: &[Job], machines: usize) -> Schedule {
    let machines = machines.max(1);
    let chain = chains(jobs);
    let mut waiting: Vec<usize> = jobs.iter().map(|j| j.after.len()).collect();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); jobs.len()];
    for (j, job) in jobs.iter().enumerate() {
        for &a in &job.after {
            next[a].push(j);
        }
    }
    // Ready jobs, longest chain first; running ones, soonest done first.
    let mut ready: BinaryHeap<Key> = (0..jobs.len())
        .filter(|&j| waiting[j] == 0)
        .map(|j| Key(chain[j], j))
        .collect();
    let mut running: BinaryHeap<std::cmp::Reverse<Key>> = BinaryHeap::new();
    let mut now = 0.0f64;
    let mut free = machines;
    loop {
        while free > 0 {
            let Some(Key(_, j)) = ready.pop() else { break };
            running.push(std::cmp::Reverse(Key(now + jobs[j].seconds, j)));
            free -= 1;
        }
        let Some(std::cmp::Reverse(Key(t, j))) = running.pop() else {
            break;
        };
        now = t;
        free += 1;
        for &n in &next[j] {
            waiting[n] -= 1;
            if waiting[n] == 0 {
                ready.push(Key(chain[n], n));
            }
        }
    }
    Schedule {
        machines,
        finish: now,
        chain: chain.iter().copied().fold(0.0, f64::max),
        shared: jobs.iter().map(|j| j.seconds).sum::<f64>() / machines as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(seconds: f64, after: &[usize]) -> Job {
        Job {
            seconds,
            after: after.to_vec(),
        }
    }

    #[test]
    fn one_machine_does_all_the_work_and_many_take_the_longest_chain() {
        // Two chains (1+2+3 and 4) and a unit reading both ends.
        let jobs = [
            job(1.0, &[]),
            job(2.0, &[0]),
            job(3.0, &[1]),
            job(4.0, &[]),
            job(5.0, &[2, 3]),
        ];
        assert_eq!(simulate(&jobs, 1).finish, 15.0);
        assert_eq!(simulate(&jobs, 2).finish, 11.0);
        assert_eq!(simulate(&jobs, 64).finish, 11.0);
        assert_eq!(simulate(&jobs, 64).chain, 11.0);
    }

    #[test]
    fn the_longest_chain_starts_first() {
        // A short unit alone and the head of a long chain: on one machine free, the chain
        // must start first, or the finish is 1 unit later.
        let jobs = [job(1.0, &[]), job(1.0, &[]), job(5.0, &[1]), job(1.0, &[])];
        let s = simulate(&jobs, 2);
        assert_eq!(s.finish, 6.0);
        assert!(s.finish >= s.chain && s.finish >= s.shared);
    }
}
