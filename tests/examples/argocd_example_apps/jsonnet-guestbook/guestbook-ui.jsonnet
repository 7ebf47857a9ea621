// Follows argocd-example-apps jsonnet-guestbook/: a Service and a Deployment, as one Jsonnet
// array, filled from params.libsonnet beside it. Written for Headway's tests.
local params = import 'params.libsonnet';
local labels = { app: params.name };

[
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: params.name },
    spec: {
      type: params.type,
      selector: labels,
      ports: [{ port: params.servicePort, targetPort: params.containerPort }],
    },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: params.name },
    spec: {
      replicas: params.replicas,
      revisionHistoryLimit: 3,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels: labels },
        spec: {
          containers: [{
            name: params.name,
            image: params.image,
            ports: [{ containerPort: params.containerPort }],
          }],
        },
      },
    },
  },
]
