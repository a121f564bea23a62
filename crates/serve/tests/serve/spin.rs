//! The known cost is CPU time: a spin pays its full amount of CPU even when the thread
//! shares its core and is preempted while it spins.

use resplab_serve::{spin, thread_cpu_ns};

#[test]
fn a_spin_pays_its_cpu_time_even_when_threads_share_the_cores() {
    // Twice as many spinning threads as cores: each is runnable only about half of the
    // time, so a spin on the wall clock would use about half the CPU it was asked for.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let ask = 40_000_000u64; // 40 ms
    let used: Vec<u64> = (0..cores * 2)
        .map(|_| {
            std::thread::spawn(move || {
                let from = thread_cpu_ns();
                spin(ask);
                thread_cpu_ns() - from
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    for u in used {
        assert!(u >= ask, "spun {u} ns of CPU, asked {ask}");
        assert!(u < ask + 20_000_000, "spun {u} ns of CPU, asked {ask}");
    }
}

#[test]
fn the_thread_clock_reads_and_advances() {
    let a = thread_cpu_ns();
    spin(1_000_000);
    let b = thread_cpu_ns();
    assert!(a > 0 && b >= a + 1_000_000, "{a} → {b}");
}
