use super::*;
use crate::catalog::parse_tests;
use crate::spec::{CommandSpec, CommandsSpec, MixSpec, Ratio, TestsSpec};
use crate::values::ValueSize;

fn args(req: &Request) -> Vec<String> {
    req.args()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[test]
fn set_get_tests_are_two_phases() {
    let w = Workload::new(&WorkloadSpec::tests(parse_tests("get,set").unwrap())).unwrap();
    let names: Vec<&str> = w.phases().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["SET", "GET"]);
    assert_eq!(w.phases()[0].commands, ["SET"]);
    let mut req = Request::new();
    let mut g = w.generator(0, 0);
    assert_eq!(g.next(&mut req), 0);
    assert_eq!(args(&req), ["SET", "key:__rand_int__", "VXK"]);
    let mut g = w.generator(1, 0);
    g.next(&mut req);
    assert_eq!(args(&req), ["GET", "key:__rand_int__"]);
}

#[test]
fn labelled_requests_name_each_by_its_phase_or_its_command() {
    let w = Workload::new(&WorkloadSpec::tests(parse_tests("get,set").unwrap())).unwrap();
    let labels: Vec<String> = w.labelled_requests(2).into_iter().map(|(l, _)| l).collect();
    assert_eq!(labels, ["SET", "SET", "GET", "GET"]);
    let w = Workload::new(&WorkloadSpec::memtier_default()).unwrap();
    let got = w.labelled_requests(20);
    assert_eq!(got.len(), 20 * w.phases().len());
    for (label, req) in &got {
        assert_eq!(
            args(req)[0].to_ascii_uppercase(),
            label.to_ascii_uppercase()
        );
    }
}

#[test]
fn shards_walk_disjoint_slices_under_sequential_patterns() {
    let spec = |pattern: KeyPattern| WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Mix(MixSpec {
            ratio: Ratio { set: 1, get: 0 },
            set_pattern: pattern,
            keys: KeySpace {
                minimum: 0,
                maximum: 999,
                ..KeySpace::default()
            },
            ..MixSpec::default()
        }),
        setup_commands: vec![],
    };
    for pattern in [KeyPattern::Sequential, KeyPattern::Parallel] {
        let mut seen = std::collections::BTreeSet::new();
        for shard in 0..4u64 {
            let w = Workload::new(&spec(pattern))
                .unwrap()
                .with_shard(shard, 4)
                .unwrap();
            let mut mine = std::collections::BTreeSet::new();
            for stream in 0..3 {
                let mut g = w.generator_partitioned(0, stream, 3);
                let mut req = Request::new();
                for _ in 0..500 {
                    g.next(&mut req);
                    mine.insert(args(&req)[1].clone());
                }
            }
            assert!(
                mine.is_disjoint(&seen),
                "{pattern:?} shard {shard} overlaps"
            );
            assert_eq!(mine.len(), 250, "{pattern:?} shard {shard}");
            seen.extend(mine);
        }
        assert_eq!(seen.len(), 1000);
    }
    assert!(Workload::new(&spec(KeyPattern::Random))
        .unwrap()
        .with_shard(4, 4)
        .is_err());
}

#[test]
fn mix_follows_memtier_ratio_sequence() {
    let spec = WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Mix(MixSpec {
            ratio: Ratio { set: 2, get: 3 },
            ..MixSpec::default()
        }),
        setup_commands: vec![],
    };
    let w = Workload::new(&spec).unwrap();
    assert_eq!(w.phases()[0].commands, ["SET", "GET"]);
    let mut g = w.generator(0, 0);
    let mut req = Request::new();
    let seq: Vec<usize> = (0..10).map(|_| g.next(&mut req)).collect();
    assert_eq!(seq, [0, 0, 1, 1, 1, 0, 0, 1, 1, 1]);
}

#[test]
fn shared_streams_draw_the_same_keys() {
    let w = Workload::new(&WorkloadSpec::memtier_default()).unwrap();
    let keys = |w: &Workload, stream: u64| {
        let mut g = w.generator(0, stream);
        let mut req = Request::new();
        (0..20)
            .map(|_| {
                g.next(&mut req);
                args(&req)[1].clone()
            })
            .collect::<Vec<_>>()
    };
    assert_ne!(keys(&w, 0), keys(&w, 1));
    let shared = w.with_shared_streams();
    assert_eq!(keys(&shared, 0), keys(&shared, 1));
}

#[test]
fn command_names_are_unique() {
    let spec = WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Commands(CommandsSpec {
            commands: vec![
                CommandSpec::new("hset __key__ f __data__"),
                CommandSpec::new("HSET __key__ g __data__"),
                CommandSpec::new("GET __key__"),
            ],
            keys: KeySpace::default(),
            values: ValueSize::default(),
            random_keyspace: None,
        }),
        setup_commands: vec!["FLUSHALL".into()],
    };
    let w = Workload::new(&spec).unwrap();
    assert_eq!(w.phases()[0].commands, ["HSET", "HSET#2", "GET"]);
    assert_eq!(args(&w.setup_requests(0)[0]), ["FLUSHALL"]);
    assert!(w.setup_requests(1).is_empty());
}

#[test]
fn tests_spec_is_validated() {
    let spec = WorkloadSpec {
        seed: 0,
        kind: WorkloadKind::Tests(TestsSpec {
            tests: vec![],
            ..TestsSpec::default()
        }),
        setup_commands: vec![],
    };
    assert!(Workload::new(&spec).is_err());
}
