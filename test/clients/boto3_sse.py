"""Server-side encryption through boto3: SSE-C, SSE-KMS with a key id, bucket default encryption,
each success and each refusal (status, code and the encryption headers); prints one JSON object.

Usage: python3 boto3_sse.py <endpoint> <access-key> <secret-key> <bucket> <kms-key-id>
"""
import hashlib
import base64
import json
import sys
import urllib.error
import urllib.request

import boto3
from botocore.config import Config
from boto3_refusals import refusal


def main() -> None:
    endpoint, access_key, secret_key, bucket, key_id = sys.argv[1:6]
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access_key, aws_secret_access_key=secret_key,
        region_name="us-east-1", config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    seen = {}
    s3.create_bucket(Bucket=bucket)
    key = bytes(range(32))
    other = bytes(reversed(range(32)))
    body = b"customer encrypted " * 5000

    put = s3.put_object(Bucket=bucket, Key="ssec", Body=body, SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    seen["ssec_put"] = [put["SSECustomerAlgorithm"], put["SSECustomerKeyMD5"] == base64.b64encode(hashlib.md5(key).digest()).decode()]
    got = s3.get_object(Bucket=bucket, Key="ssec", SSECustomerAlgorithm="AES256", SSECustomerKey=key, Range="bytes=10-99999")
    seen["ssec_range"] = got["Body"].read() == body[10:100000]
    seen["ssec_no_key"] = refusal(lambda: s3.get_object(Bucket=bucket, Key="ssec"))
    seen["ssec_wrong_key"] = refusal(lambda: s3.get_object(Bucket=bucket, Key="ssec", SSECustomerAlgorithm="AES256", SSECustomerKey=other))
    seen["ssec_head_no_key"] = refusal(lambda: s3.head_object(Bucket=bucket, Key="ssec"))
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "ssec", "SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}, ExpiresIn=300)
    seen["ssec_presigned_has_no_key"] = "customer-key=" not in url.lower()
    headers = {
        "x-amz-server-side-encryption-customer-algorithm": "AES256",
        "x-amz-server-side-encryption-customer-key": base64.b64encode(key).decode(),
        "x-amz-server-side-encryption-customer-key-MD5": base64.b64encode(hashlib.md5(key).digest()).decode(),
    }
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as answer:
        seen["ssec_presigned_get"] = answer.read() == body
    try:
        urllib.request.urlopen(url)
        seen["ssec_presigned_without_key"] = 200
    except urllib.error.HTTPError as error:
        seen["ssec_presigned_without_key"] = error.code

    put = s3.put_object(Bucket=bucket, Key="kms", Body=b"kms body", ServerSideEncryption="aws:kms", SSEKMSKeyId=key_id)
    seen["kms_put"] = [put["ServerSideEncryption"], put["SSEKMSKeyId"]]
    head = s3.head_object(Bucket=bucket, Key="kms")
    seen["kms_head"] = [head["ServerSideEncryption"], head["SSEKMSKeyId"], head["ContentLength"]]
    seen["kms_unknown"] = refusal(lambda: s3.put_object(Bucket=bucket, Key="kms-unknown", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId="no-such-key"))
    seen["kms_unknown_stored"] = refusal(lambda: s3.head_object(Bucket=bucket, Key="kms-unknown"))

    seen["bucket_none"] = refusal(lambda: s3.get_bucket_encryption(Bucket=bucket))
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    seen["bucket_rule"] = rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"]
    seen["bucket_default_put"] = s3.put_object(Bucket=bucket, Key="defaulted", Body=b"d").get("ServerSideEncryption")
    seen["bucket_unknown_key"] = refusal(lambda: s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "no-such-key"}}]}))
    s3.delete_bucket_encryption(Bucket=bucket)
    seen["bucket_deleted"] = refusal(lambda: s3.get_bucket_encryption(Bucket=bucket))
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
