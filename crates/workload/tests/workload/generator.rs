//! Generator behaviour across workload kinds: determinism from the seed, memtier
//! semantics of mixes and commands, and no allocation on the hot path.

use resplab_workload::{
    flags, CommandSpec, CommandsSpec, ExpiryRange, KeyPattern, KeySpace, MixSpec, Ratio, Replay,
    Request, TestName, TestsSpec, ValueSize, WaitSpec, Workload, WorkloadKind, WorkloadSpec,
};
use std::collections::{HashMap, HashSet};

fn mix(seed: u64, m: MixSpec) -> WorkloadSpec {
    WorkloadSpec {
        seed,
        kind: WorkloadKind::Mix(m),
        setup_commands: vec![],
    }
}

fn commands(seed: u64, c: CommandsSpec) -> WorkloadSpec {
    WorkloadSpec {
        seed,
        kind: WorkloadKind::Commands(c),
        setup_commands: vec![],
    }
}

fn commands_spec(cmds: Vec<CommandSpec>) -> CommandsSpec {
    CommandsSpec {
        commands: cmds,
        keys: KeySpace::default(),
        values: ValueSize::default(),
        random_keyspace: None,
    }
}

fn take(w: &Workload, phase: usize, stream: u64, n: usize) -> Vec<(usize, Vec<Vec<u8>>)> {
    let mut g = w.generator(phase, stream);
    let mut req = Request::new();
    (0..n)
        .map(|_| {
            let i = g.next(&mut req);
            (i, req.args().map(<[u8]>::to_vec).collect())
        })
        .collect()
}

fn all_kinds(seed: u64) -> Vec<WorkloadSpec> {
    vec![
        WorkloadSpec {
            seed,
            kind: WorkloadKind::Tests(TestsSpec {
                tests: TestName::ALL.to_vec(),
                random_keyspace: Some(100_000),
                data_size: 16,
            }),
            setup_commands: vec![],
        },
        mix(
            seed,
            MixSpec {
                values: ValueSize::Range { min: 1, max: 512 },
                set_pattern: KeyPattern::Gaussian,
                get_pattern: KeyPattern::Zipf,
                ..MixSpec::default()
            },
        ),
        commands(
            seed,
            CommandsSpec {
                commands: vec![
                    CommandSpec::new("HSET __key__ f __data__"),
                    CommandSpec {
                        ratio: 3,
                        key_pattern: KeyPattern::Sequential,
                        ..CommandSpec::new("ZADD z __rand_int__ m:__key__")
                    },
                ],
                random_keyspace: Some(1000),
                values: ValueSize::List {
                    sizes: vec![
                        resplab_workload::WeightedSize {
                            bytes: 8,
                            weight: 1,
                        },
                        resplab_workload::WeightedSize {
                            bytes: 900,
                            weight: 1,
                        },
                    ],
                },
                keys: KeySpace::default(),
            },
        ),
    ]
}

#[test]
fn same_seed_same_stream_and_streams_differ() {
    for (a, b) in all_kinds(11).iter().zip(all_kinds(11)) {
        let wa = Workload::new(a).unwrap();
        // A spec that went through JSON (as stored in a result file) gives the same run.
        let json = serde_json::to_string(&b).unwrap();
        let wb = Workload::new(&serde_json::from_str(&json).unwrap()).unwrap();
        for phase in 0..wa.phases().len() {
            let s0 = take(&wa, phase, 0, 300);
            assert_eq!(s0, take(&wb, phase, 0, 300), "phase {phase}");
            let random = s0.windows(2).any(|w| w[0] != w[1]);
            if random {
                assert!(
                    s0 != take(&wa, phase, 1, 300),
                    "streams of phase {phase} are equal"
                );
            }
        }
    }
    for (a, b) in all_kinds(11).iter().zip(all_kinds(12)) {
        let wa = Workload::new(a).unwrap();
        let wb = Workload::new(&b).unwrap();
        let all = |w: &Workload| {
            (0..w.phases().len())
                .flat_map(|p| take(w, p, 0, 50))
                .collect::<Vec<_>>()
        };
        assert!(
            all(&wa) != all(&wb),
            "seeds 11 and 12 gave the same requests"
        );
    }
}

#[test]
fn next_stops_allocating_after_warm_up() {
    for spec in all_kinds(5) {
        let w = Workload::new(&spec).unwrap();
        for phase in 0..w.phases().len() {
            let mut g = w.generator(phase, 0);
            let mut req = Request::new();
            for _ in 0..2000 {
                g.next(&mut req);
            }
            let (bytes, args) = g.max_request_size();
            let warm = req.capacity();
            for _ in 0..20_000 {
                g.next(&mut req);
                assert!(req.payload_len() <= bytes && req.arg_count() <= args);
            }
            // Growth stops once the largest request has been seen; sizes are bounded,
            // so it can only have grown up to the bound.
            let after = req.capacity();
            assert!(
                after.0 <= warm.0.max(bytes.next_power_of_two()),
                "phase {phase}"
            );
            assert_eq!(after.1, warm.1, "phase {phase}");

            // With `reserve`, not even the first call allocates.
            let mut g = w.generator(phase, 1);
            let mut req = Request::new();
            g.reserve(&mut req);
            let reserved = req.capacity();
            for _ in 0..10_000 {
                g.next(&mut req);
            }
            assert_eq!(req.capacity(), reserved, "phase {phase}");
        }
    }
}

#[test]
fn fixed_size_workload_capacity_is_stable_right_after_the_first_calls() {
    let w = Workload::new(&WorkloadSpec::memtier_default()).unwrap();
    let mut g = w.generator(0, 0);
    let mut req = Request::new();
    for _ in 0..20 {
        g.next(&mut req);
    }
    let cap = req.capacity();
    for _ in 0..200_000 {
        g.next(&mut req);
    }
    assert_eq!(req.capacity(), cap);
}

#[test]
fn memtier_mix_defaults_and_key_format() {
    let w = Workload::new(&WorkloadSpec::memtier_default()).unwrap();
    let reqs = take(&w, 0, 0, 1100);
    let sets = reqs.iter().filter(|(i, _)| *i == 0).count();
    assert_eq!(sets, 100); // 1:10
    for (i, args) in &reqs {
        let key = std::str::from_utf8(&args[1]).unwrap();
        let n: u64 = key.strip_prefix("memtier-").unwrap().parse().unwrap();
        assert!(n <= 10_000_000);
        assert_eq!(key, format!("memtier-{n}"));
        if *i == 0 {
            assert_eq!(args[0], b"SET");
            assert_eq!(args[2].len(), 32);
        } else {
            assert_eq!(args[0], b"GET");
            assert_eq!(args.len(), 2);
        }
    }
    // Values differ from request to request.
    let values: HashSet<&Vec<u8>> = reqs
        .iter()
        .filter(|(i, _)| *i == 0)
        .map(|(_, a)| &a[2])
        .collect();
    assert!(values.len() > 95);
}

#[test]
fn mix_patterns_per_side_and_key_range() {
    let spec = mix(
        3,
        MixSpec {
            ratio: Ratio { set: 1, get: 1 },
            set_pattern: KeyPattern::Sequential,
            get_pattern: KeyPattern::Random,
            keys: KeySpace {
                prefix: "k".into(),
                minimum: 10,
                maximum: 14,
                ..KeySpace::default()
            },
            values: ValueSize::Range { min: 2, max: 4 },
            expiry: None,
            wait: None,
        },
    );
    let w = Workload::new(&spec).unwrap();
    let reqs = take(&w, 0, 0, 40);
    let set_keys: Vec<&[u8]> = reqs
        .iter()
        .step_by(2)
        .map(|(_, a)| a[1].as_slice())
        .collect();
    let expected: Vec<String> = (0..20).map(|i| format!("k{}", 10 + i % 5)).collect();
    assert_eq!(
        set_keys,
        expected.iter().map(|s| s.as_bytes()).collect::<Vec<_>>()
    );
    for (_, a) in reqs.iter().step_by(2) {
        assert!((2..=4).contains(&a[2].len()));
    }
    for (_, a) in reqs.iter().skip(1).step_by(2) {
        assert_eq!(a[0], b"GET");
        let n: u64 = std::str::from_utf8(&a[1][1..]).unwrap().parse().unwrap();
        assert!((10..=14).contains(&n));
    }
}

#[test]
fn sets_with_an_expiry_range_go_as_setex_or_as_set_when_the_draw_is_zero() {
    let spec = mix(
        5,
        MixSpec {
            ratio: Ratio { set: 1, get: 1 },
            keys: KeySpace {
                prefix: "k".into(),
                minimum: 1,
                maximum: 9,
                ..KeySpace::default()
            },
            values: ValueSize::Fixed { bytes: 4 },
            expiry: Some(ExpiryRange {
                min_sec: 0,
                max_sec: 3,
            }),
            ..MixSpec::default()
        },
    );
    let w = Workload::new(&spec).unwrap();
    let mut ttls = [0usize; 4];
    for (cmd, a) in take(&w, 0, 0, 800) {
        match cmd {
            // SET and SETEX are one command of the phase: memtier's "Sets".
            0 if a[0] == b"SETEX" => {
                assert_eq!(a.len(), 4);
                assert_eq!(a[3].len(), 4);
                let ttl: usize = std::str::from_utf8(&a[2]).unwrap().parse().unwrap();
                ttls[ttl] += 1;
            }
            0 => {
                assert_eq!((a[0].as_slice(), a.len()), (&b"SET"[..], 3));
                ttls[0] += 1;
            }
            _ => assert_eq!(a[0], b"GET"),
        }
    }
    // 400 SETs, each time to live 0..=3 about a quarter of them.
    assert!(ttls.iter().all(|&n| (60..140).contains(&n)), "{ttls:?}");
    let bad = MixSpec {
        expiry: Some(ExpiryRange {
            min_sec: 0,
            max_sec: 0,
        }),
        ..MixSpec::default()
    };
    let e = Workload::new(&mix(1, bad)).unwrap_err();
    assert!(e.to_string().contains("--expiry-range '0-0'"), "{e}");
}

#[test]
fn sizes_by_key_follow_the_sets_key() {
    let spec = mix(
        2,
        MixSpec {
            ratio: Ratio { set: 1, get: 0 },
            set_pattern: KeyPattern::Sequential,
            keys: KeySpace {
                prefix: String::new(),
                minimum: 1,
                maximum: 5,
                ..KeySpace::default()
            },
            values: ValueSize::ByKey { min: 10, max: 30 },
            ..MixSpec::default()
        },
    );
    let w = Workload::new(&spec).unwrap();
    let sizes: Vec<(String, usize)> = take(&w, 0, 0, 5)
        .into_iter()
        .map(|(_, a)| (String::from_utf8(a[1].clone()).unwrap(), a[2].len()))
        .collect();
    let want = [("1", 10), ("2", 15), ("3", 20), ("4", 25), ("5", 30)];
    assert_eq!(
        sizes,
        want.map(|(k, n)| (k.to_string(), n)).to_vec(),
        "memtier's (max - min) × (key - minimum) / (maximum - minimum) + min"
    );
}

#[test]
fn parallel_pattern_splits_the_range_among_streams() {
    let spec = mix(
        3,
        MixSpec {
            ratio: Ratio { set: 1, get: 0 },
            set_pattern: KeyPattern::Parallel,
            keys: KeySpace {
                prefix: String::new(),
                minimum: 1,
                maximum: 12,
                ..KeySpace::default()
            },
            ..MixSpec::default()
        },
    );
    let w = Workload::new(&spec).unwrap();
    let mut all = Vec::new();
    for s in 0..3 {
        let mut g = w.generator_partitioned(0, s, 3);
        let mut req = Request::new();
        for _ in 0..4 {
            g.next(&mut req);
            all.push(
                std::str::from_utf8(req.arg(1).unwrap())
                    .unwrap()
                    .parse::<u64>()
                    .unwrap(),
            );
        }
    }
    assert_eq!(all, (1..=12).collect::<Vec<u64>>());
}

#[test]
fn commands_follow_ratios_share_one_key_and_substitute_placeholders() {
    let mut c = commands_spec(vec![
        CommandSpec {
            ratio: 2,
            ..flags::parse_command("SET __key__ \"v __data__\"").unwrap()
        },
        CommandSpec {
            key_pattern: flags::parse_command_key_pattern("S").unwrap(),
            ..flags::parse_command("LPUSH list:__key__ __key__ __rand_int__").unwrap()
        },
    ]);
    c.keys.minimum = 1;
    c.keys.maximum = 3;
    c.keys.prefix = "p".into();
    c.values = ValueSize::Fixed { bytes: 5 };
    c.random_keyspace = Some(50);
    let w = Workload::new(&commands(9, c)).unwrap();
    assert_eq!(w.phases()[0].commands, ["SET", "LPUSH"]);
    let reqs = take(&w, 0, 0, 9);
    let idx: Vec<usize> = reqs.iter().map(|(i, _)| *i).collect();
    assert_eq!(idx, [0, 0, 1, 0, 0, 1, 0, 0, 1]);
    let lpush_keys: Vec<&[u8]> = reqs
        .iter()
        .filter(|(i, _)| *i == 1)
        .map(|(_, a)| a[2].as_slice())
        .collect();
    assert_eq!(lpush_keys, [&b"p1"[..], b"p2", b"p3"]);
    for (i, a) in &reqs {
        if *i == 0 {
            assert_eq!(a.len(), 3);
            assert_eq!(&a[2][..2], b"v ");
            assert_eq!(a[2].len(), 7);
        } else {
            // Both __key__ of one request are the same key.
            assert_eq!(a[1], [b"list:".as_slice(), &a[2]].concat());
            let r: u64 = std::str::from_utf8(&a[3]).unwrap().parse().unwrap();
            assert_eq!(a[3].len(), 12);
            assert!(r < 50);
        }
    }
}

#[test]
fn command_ratio_zero_is_never_sent_and_names_are_counted() {
    let w = Workload::new(&commands(
        1,
        commands_spec(vec![
            CommandSpec {
                ratio: 0,
                ..CommandSpec::new("DEL __key__")
            },
            CommandSpec::new("GET __key__"),
        ]),
    ))
    .unwrap();
    let mut counts = HashMap::new();
    for (i, _) in take(&w, 0, 0, 100) {
        *counts.entry(i).or_insert(0) += 1;
    }
    assert_eq!(counts.get(&0), None);
    assert_eq!(counts.get(&1), Some(&100));
}

#[test]
fn rand_int_without_r_stays_literal_in_commands() {
    let w = Workload::new(&commands(
        1,
        commands_spec(vec![CommandSpec::new("INCR c:__rand_int__")]),
    ))
    .unwrap();
    let reqs = take(&w, 0, 0, 2);
    assert_eq!(reqs[0].1[1], b"c:__rand_int__");
}

#[test]
fn zipf_and_gaussian_mixes_concentrate_keys() {
    for (pattern, top_share) in [(KeyPattern::Zipf, 0.05), (KeyPattern::Gaussian, 0.0)] {
        let w = Workload::new(&mix(
            2,
            MixSpec {
                ratio: Ratio { set: 0, get: 1 },
                get_pattern: pattern,
                keys: KeySpace {
                    prefix: String::new(),
                    minimum: 0,
                    maximum: 999,
                    ..KeySpace::default()
                },
                ..MixSpec::default()
            },
        ))
        .unwrap();
        let keys: Vec<u64> = take(&w, 0, 0, 10_000)
            .iter()
            .map(|(_, a)| std::str::from_utf8(&a[1]).unwrap().parse().unwrap())
            .collect();
        assert!(keys.iter().all(|&k| k <= 999));
        if pattern == KeyPattern::Zipf {
            let zeros = keys.iter().filter(|&&k| k == 0).count() as f64 / 1e4;
            assert!(zeros > top_share, "key 0 share {zeros}");
        } else {
            let central = keys.iter().filter(|&&k| (333..=666).contains(&k)).count() as f64 / 1e4;
            // ±1 standard deviation around the median holds about 68%.
            assert!((0.64..0.72).contains(&central), "central {central}");
        }
    }
}

#[test]
fn cluster_tags_put_each_multi_key_request_in_one_slot() {
    for random in [Some(1000), None] {
        let spec = WorkloadSpec {
            seed: 7,
            kind: WorkloadKind::Tests(TestsSpec {
                tests: vec![TestName::Mset, TestName::Mget, TestName::Set],
                random_keyspace: random,
                data_size: 3,
            }),
            setup_commands: vec![],
        };
        let plain = Workload::new(&spec).unwrap();
        let tagged = Workload::new(&spec).unwrap().with_cluster_tags().unwrap();
        for phase in 0..2 {
            let mut g = tagged.generator(phase, 0);
            let mut req = Request::new();
            let mut tags = std::collections::BTreeSet::new();
            for _ in 0..200 {
                g.next(&mut req);
                let args: Vec<Vec<u8>> = req.args().map(<[u8]>::to_vec).collect();
                let step = if phase == 0 { 2 } else { 1 };
                let keys: Vec<&Vec<u8>> = args[1..].iter().step_by(step).collect();
                assert_eq!(keys.len(), 10);
                let tag = |k: &[u8]| {
                    let s = String::from_utf8(k.to_vec()).unwrap();
                    let open = s.find('{').unwrap();
                    let close = s.find('}').unwrap();
                    s[open + 1..close].to_string()
                };
                let first = tag(keys[0]);
                assert_eq!(first.len(), 5);
                assert!(first.parse::<u32>().unwrap() < 16384);
                assert!(keys.iter().all(|k| tag(k) == first), "{args:?}");
                tags.insert(first);
            }
            assert!(tags.len() > 150, "tags vary per request: {}", tags.len());
        }
        // Single-key tests are left as redis-benchmark sends them.
        let mut a = Request::new();
        let mut b = Request::new();
        plain.generator(2, 0).next(&mut a);
        tagged.generator(2, 0).next(&mut b);
        assert_eq!(a, b);
    }
}

/// memtier's `--wait-ratio 1:1 --num-slaves 0-0 --wait-timeout 5-5` over `--ratio 2:3`:
/// a WAIT first, then one after every second SET, with the drawn arguments.
#[test]
fn waits_go_among_the_sets_of_a_mix() {
    let spec = mix(
        4,
        MixSpec {
            ratio: Ratio { set: 2, get: 3 },
            wait: Some(WaitSpec {
                sets: 1,
                waits: 1,
                replicas_min: 0,
                replicas_max: 0,
                timeout_ms_min: 5,
                timeout_ms_max: 5,
            }),
            ..MixSpec::default()
        },
    );
    let w = Workload::new(&spec).unwrap();
    assert_eq!(w.phases()[0].commands, ["SET", "GET", "WAIT"]);
    let reqs = take(&w, 0, 0, 14);
    let letters: String = reqs.iter().map(|(c, _)| ['S', 'G', 'W'][*c]).collect();
    assert_eq!(letters, "WSSWGGGSSWGGGS");
    for (c, a) in &reqs {
        if *c == 2 {
            assert_eq!(a, &[b"WAIT".to_vec(), b"0".to_vec(), b"5".to_vec()]);
        }
    }
    let g = w.generator(0, 0);
    assert!(g.max_request_size().1 >= 3);
}

/// memtier's `--command=__monitor_line@__` beside a plain command: the replayed slot's
/// lines go out in turn, shared by every stream, each counted under its own name.
#[test]
fn replayed_lines_go_out_in_turn_under_their_own_names() {
    let replayed = CommandSpec {
        replay: Some(Replay {
            lines: vec![
                "\"hset\" \"h\" \"f\" \"1\"".into(),
                "\"GET\" \"k\"".into(),
                "\"INCR\" \"c\"".into(),
            ],
            random: false,
        }),
        ..CommandSpec::new("__monitor_line@__")
    };
    let spec = WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Commands(commands_spec(vec![
            replayed,
            CommandSpec::new("GET __key__"),
        ])),
        setup_commands: vec![],
    };
    let w = Workload::new(&spec).unwrap();
    assert_eq!(w.phases()[0].commands, ["HSET", "GET", "GET#2", "INCR"]);
    let mut gens = [w.generator(0, 0), w.generator(0, 1)];
    let mut req = Request::new();
    let mut sent = Vec::new();
    for turn in 0..4 {
        let g = &mut gens[turn % 2];
        let row = g.next(&mut req);
        sent.push((row, req.arg(0).unwrap().to_vec()));
        g.next(&mut req);
    }
    let expect: Vec<(usize, Vec<u8>)> = vec![
        (0, b"hset".to_vec()),
        (2, b"GET".to_vec()),
        (3, b"INCR".to_vec()),
        (0, b"hset".to_vec()),
    ];
    assert_eq!(sent, expect);
}
