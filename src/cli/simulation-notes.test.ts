import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifests } from '../api/manifest.ts';
import { simulationNotes } from './simulation-notes.ts';

const NODE = `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {conditions: [{type: Ready, status: "True"}]}
`;
const event = (name: string, at: string, action: string, taint = '') => `---
apiVersion: topoqueue.io/v1alpha1
kind: SimulationEvent
metadata: {name: ${name}}
spec: {at: ${at}, node: n1, action: ${action}${taint}}
`;

function notes(text: string, untilMs?: number): string[] {
  return simulationNotes(parseManifests(text, 'in.yaml').objects, untilMs);
}

describe('silent drops in a simulation input get a note', () => {
  it('a bad run-duration: its pods run the default 60s', () => {
    const [n] = notes(`apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: t}
spec:
  template:
    metadata: {annotations: {topoqueue.io/run-duration: soon}}
    spec: {containers: [{name: c}]}
`);
    assert.match(
      n!,
      /Job\/t\/j, spec\.template\.metadata\.annotations\["topoqueue\.io\/run-duration"\]: "soon" is not a Go duration .*: its pods run the default 60s/,
    );
    assert.deepEqual(
      notes(
        `apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {topoqueue.io/run-duration: 2h}}\nspec: {containers: [{name: c}]}\n`,
      ),
      [],
    );
  });

  it('a gang min-available below 1 is noted once per gang, naming the object and the value: the gang has no minimum', () => {
    const pod = (name: string, min: string) => `---
apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: t
  annotations: {gang.scheduling.koordinator.sh/name: g, gang.scheduling.koordinator.sh/min-available: "${min}"}
spec: {containers: [{name: c}]}
`;
    assert.deepEqual(notes(pod('a', '0') + pod('b', '0')), [
      'Pod/t/a: gang.scheduling.koordinator.sh/min-available 0 is below 1: gang t/g has no minimum: whatever fits is admitted, at least one pod',
    ]);
    assert.deepEqual(notes(pod('a', '2') + pod('b', '2')), []);
    const grouped = `apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg, namespace: t}
spec: {minMember: -1}
---
apiVersion: v1
kind: Pod
metadata: {name: m, namespace: t, labels: {pod-group.scheduling.sigs.k8s.io: pg}}
spec: {containers: [{name: c}]}
`;
    assert.deepEqual(notes(grouped), [
      'PodGroup/t/pg: spec.minMember -1 is below 1: gang t/pg has no minimum: whatever fits is admitted, at least one pod',
    ]);
  });

  it('SimulationEvents that change nothing: the state they set is already there, the node is gone, or --until comes first', () => {
    const text =
      NODE +
      event('e1', '1m', 'Ready') +
      event('e2', '2m', 'NotReady') +
      event('e3', '3m', 'Uncordon') +
      event('e4', '4m', 'Untaint', ', taint: {key: gpu}') +
      event('e5', '5m', 'Delete') +
      event('e6', '6m', 'Ready') +
      event('e7', '9h', 'NotReady');
    const out = notes(text, 3_600_000);
    assert.equal(out.length, 5, out.join('\n'));
    assert.match(out[0]!, /SimulationEvent\/e1: Ready on node n1 does nothing: it is already Ready/);
    assert.match(out[1]!, /SimulationEvent\/e3: Uncordon on node n1 does nothing: it is not cordoned/);
    assert.match(out[2]!, /SimulationEvent\/e4: Untaint on node n1 does nothing: it has no taint with key gpu/);
    assert.match(out[3]!, /SimulationEvent\/e6: Ready on node n1 does nothing: the node is deleted by then/);
    assert.match(out[4]!, /SimulationEvent\/e7: comes at 9h, after --until: it does nothing/);
  });
});
