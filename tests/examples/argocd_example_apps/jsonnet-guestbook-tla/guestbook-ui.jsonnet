// Follows argocd-example-apps jsonnet-guestbook-tla/: the same Service and Deployment, but the
// file is a function whose top-level arguments (each with a default) an Application's
// `directory.jsonnet.tlas` can set. Written for Headway's tests.
function(
  name='jsonnet-guestbook-ui',
  image='example/guestbook:v1',
  replicas=1,
  containerPort=80,
  servicePort=80,
  type='LoadBalancer',
)
  local labels = { app: name };
  [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: name },
      spec: {
        type: type,
        selector: labels,
        ports: [{ port: servicePort, targetPort: containerPort }],
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: name },
      spec: {
        replicas: replicas,
        revisionHistoryLimit: 3,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels: labels },
          spec: {
            containers: [{
              name: name,
              image: image,
              ports: [{ containerPort: containerPort }],
            }],
          },
        },
      },
    },
  ]
