use resplab_testkit::cluster::RedisCluster;
use std::time::Duration;

#[test]
fn a_cluster_forms_and_moves_a_slot_with_its_keys() {
    let c = RedisCluster::start(3, 1).unwrap();
    assert_eq!(c.nodes().len(), 6);
    let slot = c.key_slot("k1").unwrap();
    let owner = c.owner_of(slot).unwrap();
    let mut cl = c.master(owner).client().unwrap();
    cl.cmd(&["SET", "k1", "v"]).unwrap();
    let to = (owner + 1) % 3;
    let moved = c
        .migrate_slot(slot, owner, to, 10, Duration::from_millis(1))
        .unwrap();
    assert_eq!(moved, 1);
    assert_eq!(c.owner_of(slot).unwrap(), to);
    let got = c.master(to).client().unwrap().cmd(&["GET", "k1"]).unwrap();
    assert_eq!(got.as_text().as_deref(), Some("v"));
}
