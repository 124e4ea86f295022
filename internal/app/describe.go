package app

// DescribeModelFailure words a failed call to the model endpoint at baseURL
// for people, as a run that ends on it states its cause: "the model at
// http://127.0.0.1:9/v1 could not be reached (connection refused)".
func DescribeModelFailure(baseURL string, err error) string {
	return (&modelError{endpoint: endpointName(baseURL), err: err}).Describe()
}
