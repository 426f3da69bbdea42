import test from 'ava';
import { isLocal, parseReplaces } from '../../infra/tools/gomod.ts';

test('replace directives are read from single lines and blocks, with or without versions', (t) => {
  const replaces = parseReplaces(`module example.com/x

go 1.24

replace github.com/pulumi/pulumi/sdk/v3 => ../sdk // the sdk next door

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e
)
require k8s.io/api v0.0.0
`);
  t.deepEqual(replaces, [
    { from: 'github.com/pulumi/pulumi/sdk/v3', to: '../sdk' },
    { from: 'k8s.io/api', to: './staging/src/k8s.io/api' },
    { from: 'github.com/atotto/clipboard', to: 'github.com/tgummerer/clipboard', toVersion: 'v0.0.0-20241001131231-d02d263e614e' },
  ]);
  t.deepEqual(replaces.map(isLocal), [true, true, false]);
});
