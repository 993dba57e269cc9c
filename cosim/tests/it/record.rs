//! `cosim.csv`: every value under its own heading, whatever the names hold.

use lockstep_cosim::record::Recorder;
use lockstep_cosim::{FnParticipant, Mode, SystemBuilder, Variable};
use lockstep_harness::Micros;

#[test]
fn names_holding_commas_and_quotes_are_quoted_so_values_keep_their_columns() {
    // Modelica array elements (`A[1,2]`) are common FMU variable names.
    let outputs = vec![
        Variable::scalar("A[1,2]", 0.0, ""),
        Variable::scalar("say \"hi\"", 0.0, ""),
        Variable {
            name: "v".into(),
            len: 2,
            start: vec![0.0, 0.0],
            description: String::new(),
        },
    ];
    let p = FnParticipant::new(vec![], outputs, |t, dt, _, out| {
        let s = (t + dt).as_secs_f64();
        out.copy_from_slice(&[s, 2.0 * s, 3.0 * s, 4.0 * s]);
        Ok(())
    });
    let mut b = SystemBuilder::new(Micros(500_000));
    b.participant("m", None, Box::new(p)).unwrap();
    let mut c = b.build(Mode::Serialized).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cosim.csv");
    let mut rec = Recorder::new(&path, &c, None, Micros(500_000)).unwrap();
    for _ in 0..2 {
        c.step().unwrap();
        rec.observe(&c).unwrap();
    }
    assert_eq!(rec.finish().unwrap(), 3);
    let mut r = csv::Reader::from_path(&path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        ["time_us", "m.A[1,2]", "m.say \"hi\"", "m.v[0]", "m.v[1]"]
    );
    let rows: Vec<Vec<f64>> = r
        .records()
        .map(|row| row.unwrap().iter().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec![0.0, 0.0, 0.0, 0.0, 0.0],
            vec![500_000.0, 0.5, 1.0, 1.5, 2.0],
            vec![1_000_000.0, 1.0, 2.0, 3.0, 4.0],
        ]
    );
}
