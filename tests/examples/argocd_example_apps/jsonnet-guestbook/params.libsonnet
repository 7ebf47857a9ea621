// Follows argocd-example-apps jsonnet-guestbook/params.libsonnet: the values the guestbook
// reads, kept apart from the objects. Written for Headway's tests.
{
  name: 'jsonnet-guestbook-ui',
  image: 'example/guestbook:v1',
  replicas: 1,
  containerPort: 80,
  servicePort: 80,
  type: 'LoadBalancer',
}
