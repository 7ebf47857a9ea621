"""The Kubernetes REST API over the local store, served by `headway runtime up`.

`paths` turns a request path into the resource it names, `discovery` answers what the
store serves, `patches` applies JSON, merge and strategic-merge patches, `tables` renders
`kubectl get` rows, `status` turns errors into `Status` bodies, `operations` does each verb
against the store, `watchstream` streams watch events, and `server` is the Starlette app
and the uvicorn thread the runtime starts. docs/kubernetes.md says what is served.
"""
