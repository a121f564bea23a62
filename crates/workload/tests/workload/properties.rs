//! Property tests: no input makes the parsers or generators panic, and generated
//! requests always respect the declared bounds.

use proptest::prelude::*;
use resplab_workload::{
    flags, template, CommandSpec, CommandsSpec, KeyPattern, KeySpace, MixSpec, Ratio, Request,
    ValueSize, Workload, WorkloadKind, WorkloadSpec,
};

fn pattern() -> impl Strategy<Value = KeyPattern> {
    prop_oneof![
        Just(KeyPattern::Random),
        Just(KeyPattern::Sequential),
        Just(KeyPattern::Gaussian),
        Just(KeyPattern::Zipf),
        Just(KeyPattern::Parallel),
    ]
}

proptest! {
    #[test]
    fn parsers_never_panic(s in ".{0,40}") {
        let _ = template::split_args(&s, "--command");
        let _ = flags::parse_tests(&s);
        let _ = flags::parse_ratio(&s);
        let _ = flags::parse_key_pattern(&s);
        let _ = flags::parse_data_size_range(&s);
        let _ = flags::parse_data_size_list(&s);
        let _ = flags::parse_command(&s);
        let _ = flags::parse_arrivals(&s);
        let _ = flags::parse_rate(&s);
    }

    #[test]
    fn any_command_line_compiles_or_errors_and_generates_within_bounds(
        line in "[ a-zA-Z_\"'\\\\]{0,30}",
        seed in any::<u64>(),
        r in proptest::option::of(1u64..1_000_000),
    ) {
        let spec = WorkloadSpec {
            seed,
            kind: WorkloadKind::Commands(CommandsSpec {
                commands: vec![CommandSpec::new(line.as_str())],
                keys: KeySpace::default(),
                values: ValueSize::Range { min: 0, max: 64 },
                random_keyspace: r,
            }),
            setup_commands: vec![],
        };
        if let Ok(w) = Workload::new(&spec) {
            let mut g = w.generator(0, seed);
            let (bytes, args) = g.max_request_size();
            let mut req = Request::new();
            for _ in 0..20 {
                prop_assert_eq!(g.next(&mut req), 0);
                prop_assert!(req.payload_len() <= bytes);
                prop_assert!(req.arg_count() <= args);
                prop_assert!(req.arg_count() >= 1);
            }
        }
    }

    #[test]
    fn mixes_keep_keys_in_range(
        min in 0u64..1000,
        span in 0u64..1000,
        set_p in pattern(),
        get_p in pattern(),
        set in 0u32..5,
        get in 0u32..5,
        zipf_exp in 0.01f64..4.99,
        stream in 0u64..8,
        streams in 1u64..8,
    ) {
        prop_assume!(set + get > 0);
        let max = min + span;
        let spec = WorkloadSpec {
            seed: stream,
            kind: WorkloadKind::Mix(MixSpec {
                ratio: Ratio { set, get },
                set_pattern: set_p,
                get_pattern: get_p,
                keys: KeySpace {
                    prefix: String::new(),
                    minimum: min,
                    maximum: max,
                    zipf_exp,
                    ..KeySpace::default()
                },
                values: ValueSize::Fixed { bytes: 4 },
                expiry: None,
                wait: None,
            }),
            setup_commands: vec![],
        };
        let w = Workload::new(&spec).unwrap();
        let mut g = w.generator_partitioned(0, stream, streams);
        let mut req = Request::new();
        for _ in 0..50 {
            g.next(&mut req);
            let k: u64 = std::str::from_utf8(req.arg(1).unwrap()).unwrap().parse().unwrap();
            prop_assert!((min..=max).contains(&k), "key {} outside {}..={}", k, min, max);
        }
    }
}
