//! A `cluster = { masters, replicas }` variant's cluster, started from a real
//! `redis-server` command line and formed by the runner's own code.

use resplab_experiment::client::Client;
use resplab_experiment::cluster::LocalCluster;
use std::time::Duration;

#[test]
fn a_cluster_of_two_masters_with_a_replica_each_forms_and_serves() {
    let command: Vec<String> = [
        "redis-server",
        "--port",
        "{port}",
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut c = LocalCluster::start("c", &command, &[], None, 2, 1, Duration::from_secs(30))
        .expect("a cluster");
    assert_eq!(c.nodes.len(), 4);
    let mut ctl = Client::connect("127.0.0.1", c.seed_port(), Duration::from_secs(5)).unwrap();
    let info = ctl.call(&["CLUSTER", "INFO"]).unwrap().text();
    assert!(info.contains("cluster_state:ok"), "{info}");
    assert!(info.contains("cluster_known_nodes:4"), "{info}");
    assert!(info.contains("cluster_size:2"), "{info}");
    let ports: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    c.stop();
    for p in ports {
        assert!(Client::connect("127.0.0.1", p, Duration::from_millis(300)).is_err());
    }
}
